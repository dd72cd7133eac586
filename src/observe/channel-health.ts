/**
 * Watches the health the channel adapters report: a channel whose connection is gone for good
 * (a polling conflict, a revoked token) is logged and handed to `onFailed` once.
 */
import type { Logger } from "pino";
import type { ChannelAdapter } from "../ports.ts";

/** Starts watching; returns the function that stops it. */
export function watchChannelHealth(
  adapters: ChannelAdapter[],
  log: Logger,
  onFailed?: (channel: string, detail: string) => void,
  intervalMs = 2000,
): () => void {
  const timer = setInterval(() => {
    for (const adapter of adapters) {
      const health = adapter.health?.();
      if (health && !health.ok) {
        log.error({ channel: adapter.channel, detail: health.detail }, "channel connection lost");
        clearInterval(timer);
        onFailed?.(adapter.channel, health.detail ?? "not connected");
        return;
      }
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
