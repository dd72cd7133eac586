/**
 * Wraps a harness so the bot paces its sends to the harness's adapter faster than the real
 * platform advice: the emulators still enforce their limits (and answer 429), so delivery's
 * retry path stays exercised while the contract suite runs in seconds instead of minutes.
 */
import type { ChannelAdapter } from "../../src/ports.ts";
import type { ChannelHarness } from "../contract/harness.ts";

/** The same harness, with an adapter that asks delivery for `minIntervalMs` between sends. */
export function withPacing<H extends ChannelHarness>(harness: H, minIntervalMs: number): H {
  const inner = harness.adapter;
  const adapter: ChannelAdapter = {
    channel: inner.channel,
    capabilities: inner.capabilities,
    port: inner.port,
    pacing: { minIntervalMs },
    start: (sink) => inner.start(sink),
    stop: () => inner.stop(),
  };
  return { ...harness, adapter };
}
