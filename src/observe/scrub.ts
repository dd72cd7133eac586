/**
 * Removes secrets from text before it is logged or posted: every registered secret value
 * (tokens and keys from the config), and strings shaped like well-known tokens.
 */

const registered = new Set<string>();

/**
 * Adds a secret value to mask everywhere. Short values that read as words ("ollama", "none") are
 * not secrets worth masking and would blank out ordinary text, so they are ignored.
 */
export function registerSecret(value: string | undefined): void {
  if (!value) return;
  if (value.length >= 12 || (value.length >= 8 && /\d/.test(value) && /[A-Za-z]/.test(value))) registered.add(value);
}

const DISCORD_TOKEN = /\b[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}\b/g; // Discord bot tokens

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
  /(?<!\d)\d{6,12}:(?=[\w-]*[A-Z])(?=[\w-]*[a-z])[\w-]{30,36}(?![\w-])/g, // Telegram bot tokens (also inside /bot<token>/ URLs)
  DISCORD_TOKEN,
];

/**
 * One scan that finds whether any token shape is there at all (most text has none). The Discord
 * shape starts with a character class, not a word, so a regex tries it at every position: it is
 * looked for only where a dot follows a long enough run of token characters.
 */
const ANY_TOKEN_SHAPE = new RegExp(TOKEN_SHAPES.filter((shape) => shape !== DISCORD_TOKEN).map((shape) => shape.source).join("|"));

/** Whether some dot in `text` follows at least 23 token characters (as a Discord token's first dot does). */
function mayHoldDiscordToken(text: string): boolean {
  for (let dot = text.indexOf(".", 23); dot >= 0; dot = text.indexOf(".", dot + 1)) {
    let run = 0;
    while (run < 23 && isTokenChar(text.charCodeAt(dot - 1 - run))) run++;
    if (run === 23) return true;
  }
  return false;
}

function isTokenChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45;
}

/** A name that ends in a secret word: PGPASSWORD, api_key, GITHUB_TOKEN, client-secret (not "max_tokens"). */
const SECRET_NAME = "[A-Za-z0-9_-]*(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key)";

/**
 * A value that looks like a credential rather than a word or code: 8+ token characters with a digit,
 * or 20+; never a dotted name such as `self.tokenizer.decode` or `settings.API_KEY_V2`.
 */
function looksSecret(value: string): boolean {
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value)) return false;
  return (value.length >= 8 && /\d/.test(value) && /[A-Za-z]/.test(value)) || value.length >= 20;
}

const VALUE = "[A-Za-z0-9._~+/-]{8,}={0,2}";

/** Secrets given by name: the name stays, a credential-looking value is masked; prose and code are left alone. */
const NAMED_SECRETS: Array<[RegExp, (match: string, ...groups: string[]) => string]> = [
  // Authorization headers: "Authorization: Bearer abc…", "X-Api-Key: abc…".
  [
    new RegExp(`\\b((?:proxy-)?authorization["']?\\s*[:=]\\s*["']?)((?:Bearer|Basic|Bot|Token)\\s+)?([A-Za-z0-9._~+/-]{4,}={0,2})`, "gi"),
    (m, name, scheme, value) => (scheme || looksSecret(value!) ? `${name}[redacted]` : m),
  ],
  [
    new RegExp(`\\b((?:x-api-key|api-key|x-auth-token|x-access-token)["']?\\s*:\\s*["']?)(${VALUE})`, "gi"),
    (m, name, value) => (looksSecret(value!) ? `${name}[redacted]` : m),
  ],
  [new RegExp(`\\b(Bearer\\s+)(${VALUE})`, "g"), (m, name, value) => (looksSecret(value!) ? `${name}[redacted]` : m)],
  // JSON members: "password": "…", "api_key": "…".
  [
    new RegExp(`("${SECRET_NAME}"\\s*:\\s*")([^"\\\\\\s]{6,})"`, "gi"),
    (m, name, value) => (/\d/.test(value!) || value!.length >= 12 ? `${name}[redacted]"` : m),
  ],
  // Assignments and query parameters: PGPASSWORD=…, --password=…, ?api_key=…, &access_token=….
  [
    new RegExp(`(\\b${SECRET_NAME}\\s*=(?!=)\\s*["']?)(${VALUE})`, "gi"),
    (m, name, value) => (looksSecret(value!) ? `${name}[redacted]` : m),
  ],
  // Credentials in URLs: https://user:pass@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[A-Za-z0-9._~%+-]+:[A-Za-z0-9._~%!*+=-]+@/gi, (_m, scheme) => `${scheme}[redacted]@`],
];

/**
 * A word every named-secret pattern needs: text without one has no secret given by name. ("key"
 * alone is not one: every log line has a sessionKey; the names with "key" are api…, access…,
 * private….)
 */
const NAMED_HINT = /author|api|bearer|pass|secret|token|access[_-]?key|private[_-]?key|:\/\//i;

/**
 * Returns `text` with the registered secrets (the bot's own keys and tokens, what its MCP servers
 * are given) replaced by `[redacted]`, and nothing else: for text a tool returns to the model, where
 * token-shaped strings the person asked about must stay as they are.
 */
export function withoutRegisteredSecrets(text: string): string {
  let out = text;
  for (const secret of registered) {
    if (out.includes(secret)) out = out.split(secret).join("[redacted]");
  }
  return out;
}

/**
 * Returns `text` with every known secret, token-shaped string, and credential-looking value given under
 * a secret name (password=…, "api_key": "…", Authorization: …, user:pass@ in URLs) replaced by `[redacted]`.
 */
export function scrubSecrets(text: string): string {
  let out = withoutRegisteredSecrets(text);
  if (ANY_TOKEN_SHAPE.test(out) || mayHoldDiscordToken(out)) for (const shape of TOKEN_SHAPES) out = out.replace(shape, "[redacted]");
  if (NAMED_HINT.test(out)) {
    for (const [pattern, replace] of NAMED_SECRETS) out = out.replace(pattern, replace as (m: string, ...g: string[]) => string);
  }
  return out;
}
