/**
 * The Telegram outbound port: one Bot API call per method, replies threaded with
 * reply_parameters (and message_thread_id in forum topics), markdown sent as HTML with a
 * plain-text retry when Telegram refuses the markup, links to messages of supergroups, and Bot API
 * errors mapped for delivery. A group upgraded to a supergroup has a new chat id: Telegram names it
 * in its refusal (`migrate_to_chat_id`), the call is made again there, and the new id is kept.
 */
import { GrammyError, type Api } from "grammy";
import type { Logger } from "pino";
import type { ReplyTarget } from "../../src/envelope.ts";
import type { OutboundPort, OutboundText, SentMessage } from "../../src/ports.ts";
import { approvalCardHtml, approvalKeyboard, resolvedCardHtml } from "./card.ts";
import { isBadMarkup, isNotModified, toPortError } from "./errors.ts";
import { markdownToTelegramHtml } from "./html.ts";
import { buttonKeyboard } from "./message-buttons.ts";
import { LruMap } from "../../src/lru-map.ts";

export interface TelegramPortDeps {
  api: Api;
  log: Logger;
  /** Called after the bot posted into a chat (and topic), so inbound can mark the thread as the bot's. */
  onPosted(chatId: string, threadId: string | undefined): void;
  /** Let Telegram show link previews under the bot's messages (default off: a preview fetches whatever URL the model wrote). */
  linkPreviews?: boolean;
}

/** Telegram wants numeric chat ids; `@channelname` stays a string. */
function chatIdFrom(conversationId: string): number | string {
  return /^-?\d+$/.test(conversationId) ? Number(conversationId) : conversationId;
}

/** The supergroup a group became, when Telegram refused a call for that reason. */
function migratedTo(error: unknown): number | undefined {
  return error instanceof GrammyError ? error.parameters?.migrate_to_chat_id : undefined;
}

function threadOf(target: ReplyTarget): { message_thread_id?: number } {
  return target.threadId && /^\d+$/.test(target.threadId) ? { message_thread_id: Number(target.threadId) } : {};
}

function replyOf(target: ReplyTarget) {
  return target.replyToMessageId && /^\d+$/.test(target.replyToMessageId)
    ? { reply_parameters: { message_id: Number(target.replyToMessageId), allow_sending_without_reply: true } }
    : {};
}

function formatted(message: OutboundText): { text: string; parse_mode?: "HTML" } {
  return message.plain ? { text: message.text } : { text: markdownToTelegramHtml(message.text), parse_mode: "HTML" };
}

/** Creates the port over a grammY Api bound to the bot's token and API root. */
export function createTelegramPort(deps: TelegramPortDeps): OutboundPort {
  const { api, log } = deps;
  const link_preview_options = { is_disabled: deps.linkPreviews !== true };
  const upgraded = new LruMap<string, string>({ max: 10_000 });
  const chatIdOf = (target: ReplyTarget) => chatIdFrom(upgraded.get(target.conversationId) ?? target.conversationId);

  /** Notes the supergroup a group became, when a refusal says so; its id if it did. */
  function followed(target: ReplyTarget, error: unknown): number | undefined {
    const to = migratedTo(error);
    if (to === undefined) return undefined;
    if (upgraded.get(target.conversationId) !== String(to)) log.info({ from: target.conversationId, to }, "telegram group became a supergroup; following it");
    upgraded.set(target.conversationId, String(to));
    return to;
  }

  /**
   * Posts in the target's chat, and once more in the supergroup it became, if it did. `moved`: the
   * chat is not the target's own, where its message ids mean nothing (no reply, no topic).
   */
  async function postIn<T>(target: ReplyTarget, call: (chatId: number | string, moved: boolean) => Promise<T>): Promise<T> {
    const place = (chat: number | string) => call(chat, String(chat) !== target.conversationId);
    try {
      return await place(chatIdOf(target));
    } catch (error) {
      const to = followed(target, error);
      if (to === undefined) throw error;
      return await place(to);
    }
  }

  /**
   * A message's id for the core: the bare message id in the target's own chat, `<chat>:<id>` in the
   * supergroup it became (message ids start afresh there, so a bare id could name another message).
   */
  const idOf = (target: ReplyTarget, sent: { chat: { id: number }; message_id: number }) =>
    String(sent.chat.id) === target.conversationId ? String(sent.message_id) : `${sent.chat.id}:${sent.message_id}`;

  /** Edits the message `messageId` names, in the chat it was posted in; never in a chat it was not. */
  async function editIn<T>(target: ReplyTarget, messageId: string, call: (chatId: number | string, id: number) => Promise<T>): Promise<T> {
    const moved = /^(-?\d+):(\d+)$/.exec(messageId);
    try {
      return await call(moved ? Number(moved[1]) : chatIdFrom(target.conversationId), Number(moved ? moved[2] : messageId));
    } catch (error) {
      followed(target, error);
      throw error;
    }
  }

  /** Runs a call in HTML, and once more as plain text when Telegram refuses the markup. */
  async function withPlainFallback<T>(message: OutboundText, call: (text: string, parseMode: "HTML" | undefined) => Promise<T>): Promise<T> {
    const first = formatted(message);
    try {
      return await call(first.text, first.parse_mode);
    } catch (error) {
      if (!first.parse_mode || !isBadMarkup(error)) throw toPortError(error);
      log.warn({ err: (error as Error).message }, "telegram refused the HTML; sending as plain text");
    }
    try {
      return await call(message.text, undefined);
    } catch (error) {
      throw toPortError(error);
    }
  }

  return {
    async send(target, message): Promise<SentMessage> {
      const keyboard = message.buttons?.length ? { reply_markup: buttonKeyboard(message.buttons) } : {};
      const sent = await withPlainFallback(message, (text, parse_mode) =>
        postIn(target, (chat, moved) => api.sendMessage(chat, text, {
          ...(parse_mode ? { parse_mode } : {}),
          ...keyboard,
          ...(moved ? {} : { ...threadOf(target), ...replyOf(target) }),
          link_preview_options,
        })),
      );
      deps.onPosted(target.conversationId, target.threadId);
      return { id: idOf(target, sent) };
    },

    async edit(target, messageId, message): Promise<void> {
      const keyboard = message.buttons ? { reply_markup: buttonKeyboard(message.buttons) } : {};
      try {
        await withPlainFallback(message, (text, parse_mode) =>
          editIn(target, messageId, (chat, id) => api.editMessageText(chat, id, text, {
            ...(parse_mode ? { parse_mode } : {}),
            ...keyboard,
            link_preview_options,
          })),
        );
      } catch (error) {
        if (!isNotModified(error)) throw error;
      }
    },

    async requestApproval(target, card): Promise<SentMessage> {
      const reply_markup = approvalKeyboard(card);
      try {
        const sent = await postIn(target, (chat, moved) => api.sendMessage(chat, approvalCardHtml(card), {
          parse_mode: "HTML",
          reply_markup,
          link_preview_options,
          ...(moved ? {} : { ...threadOf(target), ...replyOf(target) }),
        }));
        deps.onPosted(target.conversationId, target.threadId);
        return { id: idOf(target, sent) };
      } catch (error) {
        throw toPortError(error);
      }
    },

    async resolveApproval(target, messageId, card, resolution): Promise<void> {
      try {
        await editIn(target, messageId, (chat, id) => api.editMessageText(chat, id, resolvedCardHtml(card, resolution), {
          parse_mode: "HTML",
          reply_markup: { inline_keyboard: [] },
          link_preview_options,
        }));
      } catch (error) {
        if (isNotModified(error)) return;
        throw toPortError(error);
      }
    },

    // Only supergroups and channels have links to their messages (t.me/c/<id without -100>/<message>).
    async permalink(target, messageId): Promise<string | undefined> {
      const moved = /^(-?\d+):(\d+)$/.exec(messageId);
      const chat = /^-100(\d+)$/.exec(moved ? moved[1]! : target.conversationId);
      const id = moved ? moved[2]! : messageId;
      return chat && /^\d+$/.test(id) ? `https://t.me/c/${chat[1]}/${id}` : undefined;
    },

    async typing(target): Promise<void> {
      try {
        await postIn(target, (chat, moved) => api.sendChatAction(chat, "typing", moved ? {} : threadOf(target)));
      } catch (error) {
        throw toPortError(error);
      }
    },
  };
}
