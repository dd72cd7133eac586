/**
 * Maps Bot API failures to what the shared delivery understands: 429 → RateLimitedError with the
 * advised delay for the chat, "message is too long" → MessageRejectedError("too_long"), bad markup →
 * MessageRejectedError("bad_markup"). Also recognizes the answers the port treats as harmless.
 */
import { GrammyError } from "grammy";
import { MessageRejectedError, RateLimitedError } from "../../src/ports.ts";

/** True when Telegram refused the markup of a message (the port then retries as plain text). */
export function isBadMarkup(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /can't parse entities/i.test(error.description);
}

/** True when an edit changed nothing; the desired state is already shown. */
export function isNotModified(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /message is not modified/i.test(error.description);
}

/** Converts a Bot API error into the port's error types; other errors pass through unchanged. */
export function toPortError(error: unknown): unknown {
  if (!(error instanceof GrammyError)) return error;
  if (error.error_code === 429) {
    const seconds = error.parameters?.retry_after ?? 1;
    // Telegram's limits are per chat (across its topics); its 429 holds that chat, not the bot.
    return new RateLimitedError(seconds * 1000, `Telegram rate limit: retry after ${seconds} s`, "conversation");
  }
  if (error.error_code === 400 && /message is too long|text is too long/i.test(error.description)) {
    return new MessageRejectedError("too_long", "Telegram refused the message: longer than 4096 characters");
  }
  if (isBadMarkup(error)) return new MessageRejectedError("bad_markup", `Telegram refused the markup: ${error.description}`);
  if (error.error_code === 400 && /message text is empty/i.test(error.description)) {
    return new MessageRejectedError("other", "Telegram refused an empty message");
  }
  return error;
}
