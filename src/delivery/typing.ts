/**
 * Keeps a typing / working indicator alive while a turn runs: shown at once, refreshed before
 * the platform lets it lapse, stopped (and cleared where the platform needs it) at the end.
 */
import type { Logger } from "pino";
import type { ReplyTarget } from "../envelope.ts";
import type { OutboundPort } from "../ports.ts";

/** Starts the indicator; call the returned function to stop it. */
export function keepTyping(port: OutboundPort, target: ReplyTarget, log: Logger, intervalMs = 4000): () => void {
  if (!port.typing) return () => {};
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    port.typing!(target).catch((err: Error) => log.debug({ err: err.message }, "typing indicator failed"));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref?.();
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    port.clearTyping?.(target).catch((err: Error) => log.debug({ err: err.message }, "clearing the typing indicator failed"));
  };
}
