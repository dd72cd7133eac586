/**
 * Whether a failed send is worth retrying: a platform outage (5xx, a timeout, a dropped
 * connection) may pass; a refusal (4xx: unknown channel, bot removed, forbidden) will not.
 * Works on the error shapes of the platform SDKs without importing them.
 */

export type SendFailure = "transient" | "permanent" | "unknown";

const NETWORK_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "EPIPE", "EAI_AGAIN", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT"]);

function statusOf(err: Record<string, unknown>): number | undefined {
  for (const key of ["status", "statusCode", "error_code"]) {
    const v = err[key];
    if (typeof v === "number" && v >= 100 && v < 600) return v;
  }
  const response = err.response as Record<string, unknown> | undefined;
  return typeof response?.status === "number" ? response.status : undefined;
}

/** Classifies a send error. */
export function classifySendFailure(error: unknown): SendFailure {
  if (!error || typeof error !== "object") return "unknown";
  const err = error as Record<string, unknown>;
  const code = typeof err.code === "string" ? err.code : undefined;
  // An adapter may mark a refusal in the body as the platform's own passing trouble.
  if (err.transient === true) return "transient";
  if (code === "slack_webapi_platform_error") return "permanent";
  if (code === "slack_webapi_request_error") return "transient";
  if (code && NETWORK_CODES.has(code)) return "transient";
  const status = statusOf(err);
  if (status !== undefined) return status >= 500 || status === 408 ? "transient" : status >= 400 ? "permanent" : "unknown";
  const cause = err.cause as Record<string, unknown> | undefined;
  if (cause && typeof cause.code === "string" && NETWORK_CODES.has(cause.code)) return "transient";
  if (err.name === "HttpError" || /socket hang up|fetch failed|network|timed? ?out/i.test(String(err.message ?? ""))) return "transient";
  return "unknown";
}
