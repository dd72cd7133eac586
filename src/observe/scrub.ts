/**
 * Removes secrets from text before it is logged or posted: every registered secret value
 * (tokens and keys from the config), and strings shaped like well-known tokens.
 */

const registered = new Set<string>();

/** Adds a secret value to mask everywhere (ignored when shorter than 6 characters). */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 6) registered.add(value);
}

const TOKEN_SHAPES: RegExp[] = [
  /\bxox[a-z]{1,2}-[A-Za-z0-9-]{8,}/g, // Slack bot, user, refresh and config tokens
  /\bxoxe\.xox[a-z]-[A-Za-z0-9-]{8,}/g, // Slack rotating tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g, // GitHub fine-grained tokens
  /\bgl(?:pat|ptt|rt)-[A-Za-z0-9_-]{16,}/g, // GitLab tokens
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API keys
  /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g, // Stripe keys
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWTs
  /\bxapp-[A-Za-z0-9-]{8,}/g, // Slack app-level tokens
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI-style keys
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /(?<!\d)\d{6,12}:[A-Za-z0-9_-]{30,}/g, // Telegram bot tokens (also inside /bot<token>/ URLs)
  /\b[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}\b/g, // Discord bot tokens
];

const SECRET_WORD = "(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)";

/** Secrets given by name: the name stays, the value is masked. */
const NAMED_SECRETS: Array<[RegExp, string]> = [
  // Authorization headers, with or without a scheme: "Authorization: Bearer abc…", "X-Api-Key: abc…".
  [/\b((?:proxy-)?authorization)(["']?\s*[:=]\s*["']?)(?:(?:Bearer|Basic|Bot|Token)\s+)?[^\s'",;}]+/gi, "$1$2[redacted]"],
  [/\b(x-api-key|api-key|x-auth-token|x-access-token|cookie)(["']?\s*:\s*["']?)[^\s'",;}]+/gi, "$1$2[redacted]"],
  [/\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/g, "Bearer [redacted]"],
  // JSON members: "password": "…", "api_key": "…".
  [new RegExp(`("[A-Za-z0-9_-]*${SECRET_WORD}[A-Za-z0-9_-]*"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, "gi"), '$1"[redacted]"'],
  // Assignments and query parameters: PGPASSWORD=…, --password=…, ?api_key=…, &access_token=….
  [new RegExp(`(\\b[A-Za-z0-9_-]*${SECRET_WORD}[A-Za-z0-9_]*\\s*=\\s*)("[^"]*"|'[^']*'|[^\\s&"',;]+)`, "gi"), "$1[redacted]"],
  // Credentials in URLs: https://user:pass@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, "$1[redacted]@"],
];

/**
 * Returns `text` with every known secret, token-shaped string and value given under a secret-looking
 * name (password=…, "api_key": "…", Authorization: …, user:pass@ in URLs) replaced by `[redacted]`.
 */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const secret of registered) {
    if (out.includes(secret)) out = out.split(secret).join("[redacted]");
  }
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, "[redacted]");
  for (const [pattern, replacement] of NAMED_SECRETS) out = out.replace(pattern, replacement);
  return out;
}
