/**
 * The pino logger, with secrets redacted twice over: by key (token, apiKey, authorization…, at
 * the top of a line's fields or one level down) and by value (every configured secret string, and
 * token-shaped strings, are masked wherever they appear in a line).
 */
import { pino, type Logger, type DestinationStream } from "pino";
import { scrubSecrets, registerSecret } from "./scrub.ts";

/** Fields whose value is never written, at the top of a line's object or one level down (`headers.authorization`). */
const SECRET_KEYS = new Set(["token", "apiKey", "api_key", "password", "secret", "authorization", "botToken", "appToken", "signingSecret"]);
const CENSOR = "[redacted]";

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The object with its secret fields censored: copied where something is censored, else returned as it is. */
function censorSecretKeys(object: Record<string, unknown>, depth = 0): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in object) {
    const value = object[key];
    let replaced: unknown = value;
    if (SECRET_KEYS.has(key)) replaced = CENSOR;
    else if (depth === 0 && isPlainObject(value)) replaced = censorSecretKeys(value, 1);
    if (replaced !== value) (out ??= { ...object })[key] = replaced;
  }
  return out ?? object;
}

export interface LoggerOptions {
  level?: string;
  /** Extra places to write JSON lines to (the log file in the data folder). */
  destinations?: DestinationStream[];
  /** Secret values that must never appear in a line. */
  secrets?: string[];
}

/** Creates the process logger. Every line passes through the secret scrubber before it is written. */
export function createLogger(options: LoggerOptions = {}): Logger {
  for (const s of options.secrets ?? []) registerSecret(s);
  const targets: DestinationStream[] = options.destinations?.length ? options.destinations : [pino.destination(1)];
  const scrubbing: DestinationStream = {
    write(line: string) {
      const clean = scrubSecrets(line);
      for (const t of targets) t.write(clean);
    },
  };
  return pino(
    {
      level: options.level ?? "info",
      // By key: a check of the line's own fields (pino's path-based redact costs several times the whole line).
      formatters: { log: censorSecretKeys },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    scrubbing,
  );
}

/** A logger that writes nowhere, for tests and tools run outside the bot. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
