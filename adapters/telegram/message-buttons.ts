/**
 * Buttons under ordinary messages (not approval cards): an inline keyboard whose callback_data is
 * the payload (one row of up to three buttons, else one button a row so labels stay readable), and
 * the callback query of a click on one. The query is answered promptly — with the outcome's message
 * as an alert only the clicker sees — and the outcome's replacement edits the clicked message.
 */
import type { InlineKeyboardMarkup } from "grammy/types";
import type { Logger } from "pino";
import { MAX_BUTTON_PAYLOAD_BYTES } from "../../src/envelope.ts";
import type { ButtonClickOutcome, InboundSink, MessageButton, OutboundPort } from "../../src/ports.ts";
import { MessageRejectedError } from "../../src/ports.ts";
import { displayName, type TelegramCallbackQuery } from "./inbound.ts";

const ONE_ROW = 3;

/** The keyboard of `buttons` (`[]`: none); throws MessageRejectedError when a payload exceeds callback_data's 64 bytes. */
export function buttonKeyboard(buttons: MessageButton[]): InlineKeyboardMarkup {
  for (const b of buttons) {
    if (Buffer.byteLength(b.payload, "utf8") > MAX_BUTTON_PAYLOAD_BYTES) {
      throw new MessageRejectedError("other", `button payload is longer than ${MAX_BUTTON_PAYLOAD_BYTES} bytes`);
    }
  }
  const keys = buttons.map((b) => ({ text: b.label, callback_data: b.payload }));
  return { inline_keyboard: keys.length <= ONE_ROW ? (keys.length ? [keys] : []) : keys.map((k) => [k]) };
}

export interface ButtonQueryDeps {
  sink: InboundSink;
  port: OutboundPort;
  log: Logger;
  account?: string;
  /** How long the click waits for the gateway before the query is answered anyway. */
  answerTimeoutMs: number;
  answer(queryId: string, text?: string): Promise<void>;
}

/** Handles the callback query of a message button (the caller checked its data is one). */
export async function handleButtonQuery(query: TelegramCallbackQuery, deps: ButtonQueryDeps): Promise<void> {
  const buttonClick = deps.sink.buttonClick?.bind(deps.sink);
  if (!query.message || !buttonClick) {
    await deps.answer(query.id, "This button does nothing here.");
    return;
  }
  const chatId = String(query.message.chat.id);
  const messageId = String(query.message.message_id);
  const pending = buttonClick({
    channel: "telegram",
    ...(deps.account ? { account: deps.account } : {}),
    payload: query.data!,
    actor: { id: String(query.from.id), name: displayName(query.from), isBot: query.from.is_bot },
    messageId,
    conversationId: chatId,
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), deps.answerTimeoutMs)));
  let outcome: ButtonClickOutcome | "late";
  try {
    outcome = await Promise.race([pending, late]);
  } catch (err) {
    deps.log.warn({ err: (err as Error).message }, "button click failed in the gateway");
    outcome = { message: "That click could not be handled. Please try again." };
  } finally {
    clearTimeout(timer);
  }
  if (outcome === "late") {
    // Answered now so the button stops spinning; the edit still follows when the gateway is done.
    await deps.answer(query.id);
    outcome = await pending.catch(() => ({}));
  } else {
    await deps.answer(query.id, outcome.message);
  }
  if (!outcome.replace) return;
  try {
    await deps.port.edit!({ channel: "telegram", account: deps.account, conversationId: chatId }, messageId, {
      ...outcome.replace, buttons: outcome.replace.buttons ?? [],
    });
  } catch (err) {
    deps.log.warn({ err: (err as Error).message }, "could not edit the clicked message");
  }
}
