/**
 * Bridges Bolt's and the Socket Mode client's logger interface to our pino logger, so
 * their lines go through the same redaction and level as everything else.
 */
import type { Logger as PinoLogger } from "pino";
import { LogLevel, type Logger as SlackLogger } from "@slack/bolt";

const LEVELS = [LogLevel.DEBUG, LogLevel.INFO, LogLevel.WARN, LogLevel.ERROR] as const;

/** A @slack/logger-compatible logger writing to `log` (Bolt's own info chatter goes to debug). */
export function boltLogger(log: PinoLogger): SlackLogger {
  const child = log.child({ component: "slack-sdk" });
  const text = (msg: unknown[]) => msg.map((m) => (m instanceof Error ? m.message : typeof m === "string" ? m : JSON.stringify(m))).join(" ");
  let level: LogLevel = LogLevel.INFO;
  return {
    debug: (...msg: unknown[]) => child.debug(text(msg)),
    info: (...msg: unknown[]) => child.debug(text(msg)),
    warn: (...msg: unknown[]) => child.warn(text(msg)),
    error: (...msg: unknown[]) => child.error(text(msg)),
    setLevel: (l: LogLevel) => {
      level = LEVELS.includes(l) ? l : LogLevel.INFO;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
