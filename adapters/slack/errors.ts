/**
 * Turns Web API failures into what the shared delivery code understands
 * (RateLimitedError, MessageRejectedError, or an error that keeps Slack's codes, so a platform
 * refusal such as `channel_not_found` is never retried) and startup failures into one clear sentence.
 */
import { RateLimitedError, MessageRejectedError } from "../../src/ports.ts";

/**
 * Errors Slack sends in a 200 body for trouble on its side ("likely due to a transient issue on our
 * end"). Not `fatal_error`: Slack says the request may have partly succeeded, so a retry could post twice.
 */
const PASSING_ERRORS = new Set(["internal_error", "service_unavailable", "request_timeout"]);

/**
 * A Web API failure with Slack's codes kept: `code` is the SDK's kind (`slack_webapi_platform_error`
 * for a refusal, `slack_webapi_request_error` for a network failure) and `slackError` Slack's own
 * reason (`channel_not_found`, `not_in_channel`). The delivery queue classifies by `code` and `transient`.
 */
export class SlackApiError extends Error {
  readonly code: string | undefined;
  readonly slackError: string | undefined;
  /** The shape of the SDK's own error, so the code reads the same from either. */
  readonly data: { error?: string } | undefined;
  readonly statusCode: number | undefined;
  /** Slack answered with an error it calls passing (its own outage): the send is worth trying again. */
  readonly transient: boolean;

  constructor(message: string, code: string | undefined, slackError: string | undefined, statusCode?: number) {
    super(message);
    this.name = "SlackApiError";
    this.code = code;
    this.slackError = slackError;
    this.transient = slackError !== undefined && PASSING_ERRORS.has(slackError);
    this.data = slackError ? { error: slackError } : undefined;
    this.statusCode = statusCode;
  }
}

interface SlackErrorShape {
  code?: string;
  retryAfter?: number;
  data?: { error?: string };
  message?: string;
  statusCode?: number;
}

/** The Slack error code of a Web API failure (`invalid_auth`, `msg_too_long`, …), if it has one. */
export function slackErrorCode(error: unknown): string | undefined {
  const e = error as SlackErrorShape | undefined;
  return typeof e?.data?.error === "string" ? e.data.error : undefined;
}

/** Maps a failed send / update to the port's error types; anything else becomes a short Error. */
export function toPortError(error: unknown, method: string): Error {
  const e = error as SlackErrorShape | undefined;
  if (e?.code === "slack_webapi_rate_limited_error") {
    // chat.postMessage is limited per channel (about one a second), so its 429 holds that channel's
    // threads too; other methods' limits are their own, and the 429 holds only the call's queue.
    const scope = method === "chat.postMessage" ? "conversation" : "target";
    return new RateLimitedError(Math.max(0, (e.retryAfter ?? 1) * 1000), `Slack rate limit on ${method}`, scope);
  }
  const code = slackErrorCode(error);
  if (code === "msg_too_long") return new MessageRejectedError("too_long", `Slack refused the message as too long (${method})`);
  if (code === "invalid_blocks" || code === "invalid_blocks_format") return new MessageRejectedError("bad_markup", `Slack refused the message layout (${method}: ${code})`);
  if (code === "no_text") return new MessageRejectedError("other", `Slack refused an empty message (${method})`);
  const kind = typeof e?.code === "string" ? e.code : undefined;
  const status = typeof e?.statusCode === "number" ? e.statusCode : undefined;
  // A code in the body means Slack answered and refused: a platform error, whatever the SDK called it.
  if (code) return new SlackApiError(`Slack ${method} failed: ${code}`, "slack_webapi_platform_error", code, status);
  return new SlackApiError(`Slack ${method} failed: ${e?.message ?? String(error)}`, kind, undefined, status);
}

const BAD_TOKEN = new Set(["invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "not_allowed_token_type"]);

/** A startup failure, phrased so the person running the bot knows which setting to fix. */
export function startupError(error: unknown, variable: string, apiUrl: string): Error {
  const code = slackErrorCode(error);
  if (code && BAD_TOKEN.has(code)) {
    const hint = variable === "SLACK_APP_TOKEN" ? "an app-level token (xapp-…) with the connections:write scope" : "the Bot User OAuth Token (xoxb-…)";
    return new Error(`Slack refused ${variable} (${code}). Set ${variable} to ${hint} from your Slack app's settings.`);
  }
  if (code) return new Error(`Slack refused to start with ${variable} (${code}).`);
  const e = error as SlackErrorShape | undefined;
  return new Error(`Could not reach Slack at ${apiUrl} to check ${variable}: ${e?.message ?? String(error)}. Check SLACK_API_URL and the network.`);
}
