/**
 * Keeps a typing / working indicator alive while a turn computes: shown at once, refreshed before
 * the platform lets it lapse, saying what the turn does where the platform shows words (Slack's
 * assistant thread status: "is running shell…"), and cleared where the platform keeps it — with the
 * answer, or as soon as the turn waits for a person.
 */
import type { Logger } from "pino";
import type { ReplyTarget } from "../envelope.ts";
import type { TurnEvent } from "../engine/types.ts";
import type { OutboundPort } from "../ports.ts";

/** A running indicator. */
export interface TypingIndicator {
  /** Follows the turn's events: a running tool is named in the status, shown at the next refresh. */
  follow(event: TurnEvent): void;
  /** Stops refreshing; the indicator lapses by itself, or goes with the next message. */
  stop(): void;
  /** Stops, and clears a status the platform keeps until told (idempotent). */
  clear(): void;
}

/** A changed status is shown at once, but no sooner than this after the previous refresh. */
const MIN_GAP_MS = 1000;

/** Starts the indicator. */
export function keepTyping(port: OutboundPort, target: ReplyTarget, log: Logger, intervalMs = 4000): TypingIndicator {
  if (!port.typing) return { follow() {}, stop() {}, clear() {} };
  let status: string | undefined;
  let shownStatus: string | undefined;
  let refreshing = true;
  let cleared = false;
  let lastTick = 0;
  let early: NodeJS.Timeout | undefined;
  const tick = () => {
    if (!refreshing) return;
    clearTimeout(early);
    early = undefined;
    lastTick = Date.now();
    shownStatus = status;
    port.typing!(target, status).catch((err: Error) => log.debug({ err: err.message }, "typing indicator failed"));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref?.();
  const stop = () => {
    refreshing = false;
    clearInterval(timer);
    clearTimeout(early);
  };
  return {
    follow(event) {
      if (event.type === "tool.start") status = `is running ${event.tool}…`;
      else if (event.type === "tool.finish") status = undefined;
      else return;
      if (status === shownStatus || early || !refreshing) return;
      early = setTimeout(tick, Math.max(0, lastTick + MIN_GAP_MS - Date.now()));
      early.unref?.();
    },
    stop,
    clear() {
      stop();
      if (cleared) return;
      cleared = true;
      port.clearTyping?.(target).catch((err: Error) => log.debug({ err: err.message }, "clearing the typing indicator failed"));
    },
  };
}
