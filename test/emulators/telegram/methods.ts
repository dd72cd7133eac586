/**
 * The Bot API methods the emulator serves, each checking what the real API checks (required
 * fields, text length after markup parsing, callback_data size, markup validity, "not modified")
 * and answering with the real `{ ok:false, error_code, description, parameters? }` shapes.
 */
import { z } from "zod";
import { checkHtml, checkMarkdownV2, type MarkupResult } from "./markup-check.ts";
import type { EmulatorState, ForceReply, InlineKeyboard, TgChat, TgMessage } from "./state.ts";
import type { ApiAnswer } from "./updates.ts";

export interface Limits {
  perChatBurst: number;
  groupPerMinute: number;
  /** Edits of messages in one group per minute (editMessageText). */
  groupEditsPerMinute: number;
}

export const ok = (result: unknown): ApiAnswer => ({ status: 200, body: { ok: true, result } });
export const fail = (code: number, description: string, parameters?: Record<string, unknown>): ApiAnswer => ({
  status: code,
  body: { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) },
});
const badRequest = (what: string) => fail(400, `Bad Request: ${what}`);

const chatId = z.union([z.number().int(), z.string().regex(/^-?\d+$/).transform(Number)]);
const intLike = z.union([z.number().int(), z.string().regex(/^-?\d+$/).transform(Number)]);

const ButtonSchema = z.object({ text: z.string().min(1), callback_data: z.string().optional(), url: z.string().optional() });
const KeyboardSchema = z.object({ inline_keyboard: z.array(z.array(ButtonSchema)) });
/** ForceReply: only `force_reply: true` is valid; the placeholder is 1-64 characters. */
const ForceReplySchema = z.object({
  force_reply: z.literal(true),
  input_field_placeholder: z.string().min(1).max(64).optional(),
  selective: z.boolean().optional(),
});

const SendMessageSchema = z.object({
  chat_id: chatId,
  text: z.string(),
  parse_mode: z.enum(["HTML", "MarkdownV2", "Markdown"]).optional(),
  message_thread_id: intLike.optional(),
  reply_parameters: z.object({ message_id: z.number().int(), allow_sending_without_reply: z.boolean().optional() }).optional(),
  reply_markup: z.union([KeyboardSchema, ForceReplySchema]).optional(),
  link_preview_options: z.object({ is_disabled: z.boolean().optional() }).optional(),
});

const EditTextSchema = z.object({
  chat_id: chatId,
  message_id: intLike,
  text: z.string(),
  parse_mode: z.enum(["HTML", "MarkdownV2", "Markdown"]).optional(),
  reply_markup: KeyboardSchema.optional(),
  link_preview_options: z.object({ is_disabled: z.boolean().optional() }).optional(),
});

const EditMarkupSchema = z.object({ chat_id: chatId, message_id: intLike, reply_markup: KeyboardSchema.optional() });
const AnswerCallbackSchema = z.object({
  callback_query_id: z.string().min(1),
  text: z.string().max(200).optional(),
  show_alert: z.boolean().optional(),
});
const ChatActionSchema = z.object({
  chat_id: chatId,
  action: z.enum(["typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice", "upload_document", "choose_sticker", "find_location", "record_video_note", "upload_video_note"]),
  message_thread_id: intLike.optional(),
});
const CommandsSchema = z.object({
  commands: z.array(z.object({ command: z.string().regex(/^[a-z0-9_]{1,32}$/), description: z.string().min(1).max(256) })).max(100),
});
const SetWebhookSchema = z.object({
  url: z.string(),
  secret_token: z.string().regex(/^[A-Za-z0-9_-]{1,256}$/).optional(),
  allowed_updates: z.array(z.string()).optional(),
  drop_pending_updates: z.boolean().optional(),
});

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const field = issue.path.join(".") || "parameters";
  return issue.code === "invalid_type" && issue.input === undefined ? `${field} is empty` : `${field} is invalid`;
}

function parseMarkup(text: string, mode: string | undefined): MarkupResult {
  if (mode === "HTML") return checkHtml(text);
  if (mode === "MarkdownV2") return checkMarkdownV2(text);
  return { ok: true, visible: text };
}

function checkKeyboard(markup: InlineKeyboard | undefined): ApiAnswer | undefined {
  for (const row of markup?.inline_keyboard ?? []) {
    for (const button of row) {
      const kinds = [button.callback_data, button.url].filter((v) => v !== undefined).length;
      if (kinds !== 1) return badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard");
      if (button.callback_data !== undefined) {
        const bytes = Buffer.byteLength(button.callback_data, "utf8");
        if (bytes < 1 || bytes > 64) return badRequest("BUTTON_DATA_INVALID");
      }
    }
  }
  return undefined;
}

function checkText(text: string, mode: string | undefined): { visible: string } | ApiAnswer {
  const parsed = parseMarkup(text, mode);
  if (!parsed.ok) return fail(400, parsed.description);
  if (parsed.visible.trim().length === 0) return badRequest("message text is empty");
  if (parsed.visible.length > 4096) return badRequest("message is too long");
  return { visible: parsed.visible };
}

/**
 * Whom a ForceReply opens the reply box for. With `selective`: the users the text mentions (text
 * mentions by id, @usernames) and the sender of the message it replies to, unless that is a bot.
 */
function forceReplyOf(markup: z.infer<typeof ForceReplySchema>, sentText: string, replyTo: TgMessage | undefined): ForceReply {
  const base = { ...(markup.input_field_placeholder ? { placeholder: markup.input_field_placeholder } : {}) };
  if (!markup.selective) return { ...base, for: "everyone" };
  const ids = [...sentText.matchAll(/tg:\/\/user\?id=(\d+)/g)].map((m) => Number(m[1]));
  const usernames = [...sentText.matchAll(/(?:^|[^\w])@(\w{5,32})/g)].map((m) => m[1]!.toLowerCase());
  const replied = replyTo && !replyTo.from.is_bot ? [replyTo.from.id] : [];
  return { ...base, for: [...new Set([...ids, ...replied])], ...(usernames.length ? { usernames } : {}) };
}

const isAnswer = (v: unknown): v is ApiAnswer => typeof v === "object" && v !== null && "status" in v && "body" in v;

/** The method table: name → handler over the parsed parameters. */
export function createMethods(state: EmulatorState, limits: Limits, hooks: { onWebhookChange: () => void }) {
  const chatOf = (id: number): TgChat | undefined => state.chats.get(id);
  /** The Bot API's answer to any call naming a group that became a supergroup. */
  const movedAway = (id: number): ApiAnswer | undefined => {
    const to = state.migrated.get(id);
    return to === undefined ? undefined : fail(400, "Bad Request: group chat was upgraded to a supergroup chat", { migrate_to_chat_id: to });
  };

  function sendMessage(raw: Record<string, unknown>): ApiAnswer {
    const p = SendMessageSchema.safeParse(raw);
    if (!p.success) return badRequest(firstIssue(p.error));
    const args = p.data;
    const moved = movedAway(args.chat_id);
    if (moved) return moved;
    const chat = chatOf(args.chat_id);
    if (!chat) return badRequest("chat not found");
    const text = checkText(args.text, args.parse_mode);
    if (isAnswer(text)) return text;
    const keyboard = args.reply_markup && "inline_keyboard" in args.reply_markup ? args.reply_markup : undefined;
    const forceReply = args.reply_markup && "force_reply" in args.reply_markup ? args.reply_markup : undefined;
    const keyboardError = checkKeyboard(keyboard);
    if (keyboardError) return keyboardError;
    if (args.message_thread_id !== undefined && !chat.is_forum) return badRequest("message thread not found");
    let replyTo: TgMessage | undefined;
    if (args.reply_parameters) {
      replyTo = state.findMessage(chat.id, args.reply_parameters.message_id);
      if (!replyTo && !args.reply_parameters.allow_sending_without_reply) return badRequest("message to be replied not found");
    }
    const wait = state.takeSendSlot(chat, limits);
    if (wait !== undefined) return fail(429, `Too Many Requests: retry after ${wait}`, { retry_after: wait });
    const threadId = args.message_thread_id ?? (chat.is_forum ? replyTo?.message_thread_id : undefined);
    const message: TgMessage = {
      message_id: state.newMessageId(chat.id),
      date: Math.floor(Date.now() / 1000),
      chat,
      from: state.bot,
      text: text.visible,
      ...(threadId !== undefined ? { message_thread_id: threadId, is_topic_message: true } : {}),
      ...(replyTo ? { reply_to_message: replyTo } : {}),
      ...(keyboard && keyboard.inline_keyboard.length > 0 ? { reply_markup: keyboard } : {}),
      ...(forceReply ? { forceReply: forceReplyOf(forceReply, args.text, replyTo) } : {}),
      sentText: args.text,
      ...(args.parse_mode ? { parseMode: args.parse_mode } : {}),
    };
    state.storeMessage(message);
    return ok(message);
  }

  function editable(chatIdValue: number, messageId: number): TgMessage | ApiAnswer {
    const moved = movedAway(chatIdValue);
    if (moved) return moved;
    if (!chatOf(chatIdValue)) return badRequest("chat not found");
    const message = state.findMessage(chatIdValue, messageId);
    if (!message) return badRequest("message to edit not found");
    if (message.from.id !== state.bot.id) return badRequest("message can't be edited");
    return message;
  }

  function editMessageText(raw: Record<string, unknown>): ApiAnswer {
    const p = EditTextSchema.safeParse(raw);
    if (!p.success) return badRequest(firstIssue(p.error));
    const message = editable(p.data.chat_id, p.data.message_id);
    if (isAnswer(message)) return message;
    const text = checkText(p.data.text, p.data.parse_mode);
    if (isAnswer(text)) return text;
    const keyboardError = checkKeyboard(p.data.reply_markup);
    if (keyboardError) return keyboardError;
    const markup = p.data.reply_markup && p.data.reply_markup.inline_keyboard.length > 0 ? p.data.reply_markup : undefined;
    if (message.text === text.visible && JSON.stringify(message.reply_markup) === JSON.stringify(markup)) {
      return badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message");
    }
    const wait = state.takeEditSlot(message.chat, limits);
    if (wait !== undefined) return fail(429, `Too Many Requests: retry after ${wait}`, { retry_after: wait });
    message.text = text.visible;
    message.sentText = p.data.text;
    message.edit_date = Math.floor(Date.now() / 1000);
    if (markup) message.reply_markup = markup;
    else delete message.reply_markup;
    return ok(message);
  }

  function editMessageReplyMarkup(raw: Record<string, unknown>): ApiAnswer {
    const p = EditMarkupSchema.safeParse(raw);
    if (!p.success) return badRequest(firstIssue(p.error));
    const message = editable(p.data.chat_id, p.data.message_id);
    if (isAnswer(message)) return message;
    const keyboardError = checkKeyboard(p.data.reply_markup);
    if (keyboardError) return keyboardError;
    const markup = p.data.reply_markup && p.data.reply_markup.inline_keyboard.length > 0 ? p.data.reply_markup : undefined;
    if (JSON.stringify(message.reply_markup) === JSON.stringify(markup)) {
      return badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message");
    }
    if (markup) message.reply_markup = markup;
    else delete message.reply_markup;
    message.edit_date = Math.floor(Date.now() / 1000);
    return ok(message);
  }

  function answerCallbackQuery(raw: Record<string, unknown>): ApiAnswer {
    const p = AnswerCallbackSchema.safeParse(raw);
    if (!p.success) return badRequest(firstIssue(p.error));
    const query = state.callbackAnswers.get(p.data.callback_query_id);
    if (!query || query.answered) return badRequest("query is too old and response timeout expired or query ID is invalid");
    const answer = { ...(p.data.text !== undefined ? { text: p.data.text } : {}), ...(p.data.show_alert !== undefined ? { show_alert: p.data.show_alert } : {}) };
    query.answered = answer;
    query.resolve(answer);
    return ok(true);
  }

  function sendChatAction(raw: Record<string, unknown>): ApiAnswer {
    const p = ChatActionSchema.safeParse(raw);
    if (!p.success) return badRequest(firstIssue(p.error));
    const moved = movedAway(p.data.chat_id);
    if (moved) return moved;
    if (!chatOf(p.data.chat_id)) return badRequest("chat not found");
    return ok(true);
  }

  function setMyCommands(raw: Record<string, unknown>): ApiAnswer {
    const p = CommandsSchema.safeParse(raw);
    if (!p.success) return badRequest(firstIssue(p.error));
    return ok(true);
  }

  function setWebhook(raw: Record<string, unknown>): ApiAnswer {
    const p = SetWebhookSchema.safeParse(raw);
    if (!p.success) return badRequest(firstIssue(p.error));
    if (p.data.url === "") {
      state.webhook = undefined;
    } else {
      if (!/^https?:\/\//.test(p.data.url)) return badRequest("bad webhook: An HTTPS URL must be provided for webhook");
      if (p.data.drop_pending_updates) state.pending.splice(0);
      state.webhook = {
        url: p.data.url,
        ...(p.data.secret_token ? { secretToken: p.data.secret_token } : {}),
        ...(p.data.allowed_updates ? { allowedUpdates: p.data.allowed_updates } : {}),
      };
    }
    hooks.onWebhookChange();
    return ok(true);
  }

  function deleteWebhook(raw: Record<string, unknown>): ApiAnswer {
    if (raw.drop_pending_updates === true || raw.drop_pending_updates === "true") state.pending.splice(0);
    state.webhook = undefined;
    hooks.onWebhookChange();
    return ok(true);
  }

  function getWebhookInfo(): ApiAnswer {
    return ok({
      url: state.webhook?.url ?? "",
      has_custom_certificate: false,
      pending_update_count: state.pending.length,
      ...(state.webhook?.allowedUpdates ? { allowed_updates: state.webhook.allowedUpdates } : {}),
    });
  }

  const getMe = (): ApiAnswer => ok({ ...state.bot, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false });

  return { getMe, sendMessage, editMessageText, editMessageReplyMarkup, answerCallbackQuery, sendChatAction, setMyCommands, setWebhook, deleteWebhook, getWebhookInfo } as Record<string, (raw: Record<string, unknown>) => ApiAnswer>;
}
