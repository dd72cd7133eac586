/**
 * A channel only one replica may connect at a time (Discord allows one gateway connection per bot
 * without sharding): the replica that holds a named lease in the database starts the adapter; the
 * others stand by and try again every few seconds, so when the holder dies another one connects
 * within about a lease's length. A replica that loses the lease disconnects.
 */
import type { Logger } from "pino";
import type { ChannelAdapter, InboundSink } from "../ports.ts";
import type { Coordination } from "../store/coordination.ts";

/** The adapter behind a named lease; `serving()` tells whether this replica holds it (and is connected). */
export interface LeasedChannel extends ChannelAdapter {
  serving(): boolean;
}

export function leasedChannel(adapter: ChannelAdapter, coordination: Coordination, log: Logger, ttlMs: number): LeasedChannel {
  const name = `${adapter.channel}-gateway`;
  let sink: InboundSink | undefined;
  let connected = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let lastFailure: string | undefined;

  const tick = async () => {
    if (stopped || !sink) return;
    const held = await coordination.holdNamed(name, ttlMs).catch(() => false);
    if (held && !connected) {
      try {
        await adapter.start(sink);
        connected = true;
        lastFailure = undefined;
        log.info({ channel: adapter.channel }, "this replica holds the gateway lease and connected");
      } catch (err) {
        lastFailure = (err as Error).message;
        log.error({ channel: adapter.channel, err: lastFailure }, "the channel could not connect; retrying");
        await coordination.releaseNamed(name).catch(() => {});
      }
    } else if (!held && connected) {
      connected = false;
      log.warn({ channel: adapter.channel }, "another replica took the gateway lease; disconnecting here");
      await adapter.stop().catch(() => {});
    }
  };
  const loop = () => {
    if (stopped) return;
    void tick().finally(() => {
      if (!stopped) timer = setTimeout(loop, Math.max(250, Math.floor(ttlMs / 3))).unref();
    });
  };

  return {
    channel: adapter.channel,
    capabilities: adapter.capabilities,
    port: adapter.port,
    pacing: adapter.pacing,
    serving: () => connected,
    health: () => {
      if (connected) return adapter.health?.() ?? { ok: true };
      return lastFailure ? { ok: false, detail: lastFailure } : { ok: true, detail: "standing by: another replica holds the gateway connection" };
    },
    async start(s) {
      sink = s;
      // The first attempt is awaited, so a replica that can take the lease is connected when start returns.
      await tick();
      if (lastFailure && !connected) throw new Error(lastFailure);
      timer = setTimeout(loop, Math.max(250, Math.floor(ttlMs / 3))).unref();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      if (connected) await adapter.stop().catch(() => {});
      connected = false;
      await coordination.releaseNamed(name).catch(() => {});
    },
  };
}
