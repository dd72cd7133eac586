/**
 * The getUpdates loop. Updates are handled concurrently (the handler keeps per-chat order), and
 * the offset watermark only moves past an update once its handling has finished, so a restart
 * neither skips an update that was still in flight nor replays the ones before it. Telegram keeps
 * every update at or above the offset we poll with, so in-flight updates come back in later
 * batches; those are recognized by id (at most the newest seen) and not handled twice.
 */
import { GrammyError, type Api } from "grammy";
import type { Logger } from "pino";
import { updateIdOf } from "./inbound.ts";

/** Where the poller keeps the next update_id to ask for (the lead wires it to the store). */
export interface OffsetStore {
  get(): Promise<number | undefined>;
  set(n: number): Promise<void>;
}

export interface UpdatePollerOptions {
  api: Api;
  log: Logger;
  offsetStore?: OffsetStore;
  /** Handles one raw update; resolves when it is no longer in flight. Must not throw. */
  handle(update: unknown): Promise<void>;
  /** Long-poll timeout (default 25 s). */
  pollTimeoutSeconds?: number;
  /** Longest pause before polling again while updates are in flight (default 150 ms; it ends once they are handled). */
  busyPollMs?: number;
  /** Pause after a failed poll (default 1 s). */
  retryDelayMs?: number;
  /** Consecutive 409 answers after which polling gives up (default 3). */
  maxConflicts?: number;
  /** Called when polling stops for good (conflict, revoked token). */
  onFatal(error: Error): void;
}

const ALLOWED_UPDATES = ["message", "callback_query"] as const;

/** Explains a 409 from getUpdates in words that say what to do: a webhook is set, or another process polls. */
export function conflictMessage(description: string): string {
  const cause = /webhook/i.test(description)
    ? "A webhook is set for this TELEGRAM_BOT_TOKEN (another deployment may have set it). Remove it (restarting this " +
      "process in polling mode removes it), or run this bot in webhook mode with TELEGRAM_WEBHOOK_URL."
    : "Another process is polling with the same TELEGRAM_BOT_TOKEN; only one may. Stop the other instance, or give " +
      "this one its own bot token.";
  return `Telegram refused getUpdates (409 Conflict: ${description}). ${cause}`;
}

/** Explains a 401 after polling worked: the token was revoked or replaced. */
export const TOKEN_REVOKED =
  "Telegram no longer accepts TELEGRAM_BOT_TOKEN (401 Unauthorized): the token was revoked or regenerated in " +
  "@BotFather. Put the current token in TELEGRAM_BOT_TOKEN and restart.";

/** How long a moved offset waits before it is written. */
const OFFSET_WRITE_DELAY_MS = 250;

/** Polls getUpdates and hands every new update to `handle`, persisting the offset watermark. */
export class UpdatePoller {
  private readonly o: UpdatePollerOptions;
  private readonly inFlight = new Set<number>();
  private base: number | undefined;
  private maxSeen: number | undefined;
  private persisted: number | undefined;
  /** The last offset handed to the store. */
  private written: number | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  /** Ends the pause of a poll that waits for the updates in flight (see run). */
  private handled: (() => void) | undefined;

  constructor(options: UpdatePollerOptions) {
    this.o = options;
  }

  /** Loads the offset and makes a first poll, so a conflict or bad token fails the start. */
  async start(): Promise<void> {
    this.base = await this.o.offsetStore?.get();
    this.persisted = this.base;
    this.written = this.base;
    try {
      await this.pollOnce(0);
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 409) throw new Error(conflictMessage(error.description));
      throw error;
    }
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop;
    // The offset reached before stopping is kept; nothing after it (a newer poller may own it then).
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flush();
    }
    await this.writes;
  }

  /** The next update_id to ask for: the lowest one still in flight, else one past the newest seen. */
  private watermark(): number | undefined {
    if (this.inFlight.size > 0) return Math.min(...this.inFlight);
    return this.maxSeen !== undefined ? this.maxSeen + 1 : this.base;
  }

  private async run(): Promise<void> {
    let conflicts = 0;
    const maxConflicts = this.o.maxConflicts ?? 3;
    while (!this.stopped) {
      // Telegram sends again every update at or above the offset asked with, so a poll made while
      // updates are in flight brings those back first (a page holds 100): wait until they are
      // handled, or busyPollMs for updates that arrive behind a slow one.
      if (this.inFlight.size > 0) await this.pause(this.o.busyPollMs ?? 150, true);
      if (this.stopped) break;
      const busy = this.inFlight.size > 0;
      try {
        await this.pollOnce(busy ? 0 : (this.o.pollTimeoutSeconds ?? 25));
        conflicts = 0;
      } catch (error) {
        if (this.stopped) break;
        if (error instanceof GrammyError && (error.error_code === 401 || error.error_code === 404)) {
          this.o.onFatal(new Error(TOKEN_REVOKED));
          return;
        }
        if (error instanceof GrammyError && error.error_code === 409) {
          conflicts += 1;
          this.o.log.warn({ conflicts, description: error.description }, "telegram getUpdates conflict");
          if (conflicts >= maxConflicts) {
            this.o.onFatal(new Error(conflictMessage(error.description)));
            return;
          }
        } else {
          this.o.log.warn({ err: (error as Error).message }, "telegram getUpdates failed; retrying");
        }
        const advised = error instanceof GrammyError ? error.parameters?.retry_after : undefined;
        await this.pause(advised !== undefined ? advised * 1000 : (this.o.retryDelayMs ?? 1000));
      }
    }
  }

  /** One getUpdates call; returns how many updates were new. */
  private async pollOnce(timeout: number): Promise<number> {
    const offset = this.watermark();
    const updates = await this.o.api.getUpdates(
      { ...(offset !== undefined ? { offset } : {}), limit: 100, timeout, allowed_updates: [...ALLOWED_UPDATES] },
      // grammY types its signal with the abort-controller polyfill; Node's AbortSignal is what it uses at runtime.
      this.abort.signal as unknown as Parameters<Api["getUpdates"]>[1],
    );
    let fresh = 0;
    for (const update of updates) {
      const id = updateIdOf(update);
      // Telegram serves updates in id order, so anything up to the newest seen was dispatched already
      // (it is still in flight, or finished while this poll was on the wire).
      if (id === undefined || (this.maxSeen !== undefined && id <= this.maxSeen)) continue;
      fresh += 1;
      this.maxSeen = Math.max(this.maxSeen ?? id, id);
      this.inFlight.add(id);
      void this.dispatch(id, update);
    }
    this.persist();
    return fresh;
  }

  private async dispatch(id: number, update: unknown): Promise<void> {
    try {
      await this.o.handle(update);
    } catch (error) {
      this.o.log.warn({ updateId: id, err: (error as Error).message }, "telegram update handler failed");
    }
    this.inFlight.delete(id);
    if (this.inFlight.size === 0) this.handled?.();
    this.persist();
  }

  private persist(): void {
    if (this.stopped) return; // a newer poller may own the offset now
    const next = this.watermark();
    if (next === undefined || (this.persisted !== undefined && next <= this.persisted)) return;
    this.persisted = next;
    if (!this.o.offsetStore || this.flushTimer) return;
    // Updates handled meanwhile share one write; an offset a crash leaves behind only brings back
    // updates the gateway's dedupe drops.
    this.flushTimer = setTimeout(() => this.flush(), OFFSET_WRITE_DELAY_MS);
    this.flushTimer.unref();
  }

  private flush(): void {
    this.flushTimer = undefined;
    const store = this.o.offsetStore;
    const value = this.persisted;
    if (!store || value === undefined || value === this.written) return;
    this.written = value;
    this.writes = this.writes
      .then(() => store.set(value))
      .catch((error: unknown) => this.o.log.warn({ err: (error as Error).message }, "could not save the telegram offset"));
  }

  /** Waits `ms`; cut short by stop(), and with `untilHandled` by the last in-flight update being handled. */
  private pause(ms: number, untilHandled = false): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.abort.signal.removeEventListener("abort", done);
        if (this.handled === done) this.handled = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.abort.signal.addEventListener("abort", done, { once: true });
      if (untilHandled) this.handled = done;
    });
  }
}
