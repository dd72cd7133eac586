/**
 * Translates discord.js errors into the port's errors (RateLimitedError, MessageRejectedError)
 * and startup failures into messages that say which setting to fix.
 */
import { DiscordAPIError, RateLimitError } from "discord.js";
import { MessageRejectedError, RateLimitedError } from "../../src/ports.ts";
import { scrubSecrets } from "../../src/observe/scrub.ts";

/** Discord's "Invalid Form Body" code. */
const INVALID_FORM_BODY = 50035;

function hasLengthError(tree: unknown): boolean {
  if (!tree || typeof tree !== "object") return false;
  const errors = (tree as { _errors?: Array<{ code?: string }> })._errors;
  if (errors?.some((e) => e.code === "BASE_TYPE_MAX_LENGTH")) return true;
  return Object.entries(tree).some(([key, value]) => key !== "_errors" && hasLengthError(value));
}

/** Maps an error thrown by a discord.js REST call to the port's error types; other errors pass through. */
export function toPortError(err: unknown): unknown {
  // discord.js keeps Discord's buckets per route (a channel's messages) and the global limit; a 429
  // holds the channel, or everything the bot sends when Discord says the limit is global.
  if (err instanceof RateLimitError) {
    const ms = Math.max(0, Math.ceil(err.retryAfter || err.timeToReset));
    return new RateLimitedError(ms, `Discord rate limit${err.global ? " (global)" : ""} on ${err.route}: retry after ${ms} ms`, err.global ? "bot" : "conversation");
  }
  if (err instanceof DiscordAPIError) {
    if (err.status === 429) {
      const raw = err.rawError as { retry_after?: unknown; global?: unknown };
      const ms = typeof raw.retry_after === "number" ? Math.max(0, Math.ceil(raw.retry_after * 1000)) : 1000;
      return new RateLimitedError(ms, `Discord rate limit: retry after ${ms} ms`, raw.global === true ? "bot" : "conversation");
    }
    if (err.code === INVALID_FORM_BODY) {
      const raw = err.rawError as { errors?: { content?: unknown } };
      if (hasLengthError(raw.errors?.content)) return new MessageRejectedError("too_long", "Discord refused the message: longer than 2,000 characters");
      return new MessageRejectedError("other", `Discord refused the message: ${err.message}`);
    }
    if (err.code === 50006) return new MessageRejectedError("other", "Discord refused an empty message");
  }
  return err;
}

/** Runs a REST call, rethrowing its failure as a port error. */
export async function portCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toPortError(err);
  }
}

/** A startup failure with a message meant for the person running the bot (no stack trace needed). */
export class DiscordStartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DiscordStartupError";
  }
}

/** Explains why logging in failed, naming what to fix. */
export function explainLoginFailure(err: unknown): DiscordStartupError {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === "TokenInvalid" || (err instanceof DiscordAPIError && err.status === 401) || /Authentication failed/i.test(message)) {
    return new DiscordStartupError(
      "Discord rejected the bot token (401 Unauthorized). Set DISCORD_TOKEN to the token shown under Developer Portal → your application → Bot → Reset Token.",
    );
  }
  if (/disallowed intents/i.test(message)) {
    return new DiscordStartupError(
      "Discord refused the gateway connection (close code 4014, disallowed intents): the Message Content intent is not enabled. Turn on \"Message Content Intent\" under Developer Portal → your application → Bot → Privileged Gateway Intents.",
    );
  }
  return new DiscordStartupError(`Could not connect to Discord: ${scrubSecrets(message)}. Check DISCORD_TOKEN and DISCORD_API_URL.`);
}
