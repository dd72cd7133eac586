/**
 * The pino logger, with secrets redacted twice over: by key (token, apiKey, authorization…)
 * and by value (every configured secret string, and token-shaped strings, are masked
 * wherever they appear in a line).
 */
import { pino, type Logger, type DestinationStream } from "pino";
import { scrubSecrets, registerSecret } from "./scrub.ts";

const REDACT_PATHS = [
  "token", "*.token", "apiKey", "*.apiKey", "api_key", "*.api_key", "password", "*.password",
  "secret", "*.secret", "authorization", "*.authorization", "headers.authorization", "*.headers.authorization",
  "botToken", "appToken", "signingSecret", "*.botToken", "*.appToken", "*.signingSecret",
];

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
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
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
