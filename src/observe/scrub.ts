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
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/g, // Slack bot/user tokens
  /\bxapp-[A-Za-z0-9-]{8,}/g, // Slack app-level tokens
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI-style keys
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /(?<!\d)\d{6,12}:[A-Za-z0-9_-]{30,}/g, // Telegram bot tokens (also inside /bot<token>/ URLs)
  /\b[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}\b/g, // Discord bot tokens
  /\b(Bearer|Bot)\s+[A-Za-z0-9._~+/=-]{12,}/g, // authorization headers
];

/** Returns `text` with every known secret and token-shaped string replaced by `[redacted]`. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const secret of registered) {
    if (out.includes(secret)) out = out.split(secret).join("[redacted]");
  }
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, (m) => (m.startsWith("Bearer") || m.startsWith("Bot ") ? `${m.split(/\s+/)[0]} [redacted]` : "[redacted]"));
  return out;
}
