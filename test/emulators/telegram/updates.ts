/**
 * How updates leave the emulator: getUpdates long polling (offset confirms everything below it;
 * a newer poll terminates an older one with 409; 409 while a webhook is set) and, in webhook
 * mode, POSTs to the bot's URL with the secret header, retried until the bot answers 2xx.
 */
import type { EmulatorState, TgUpdate } from "./state.ts";

export interface PollParams {
  offset?: number;
  limit?: number;
  timeout?: number;
  allowed_updates?: string[];
}

export type ApiAnswer = { status: number; body: Record<string, unknown> };

const ok = (result: unknown): ApiAnswer => ({ status: 200, body: { ok: true, result } });
const conflict = (description: string): ApiAnswer => ({ status: 409, body: { ok: false, error_code: 409, description } });

/** Serves getUpdates; at most one poll is active, like the real Bot API. */
export class LongPoller {
  private readonly state: EmulatorState;
  private active: { finish: (a: ApiAnswer) => void } | undefined;

  constructor(state: EmulatorState) {
    this.state = state;
  }

  poll(params: PollParams, closed: Promise<void>): Promise<ApiAnswer> {
    if (this.state.webhook) {
      return Promise.resolve(conflict("Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"));
    }
    if (this.active) {
      this.active.finish(conflict("Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"));
    }
    if (params.offset !== undefined) {
      if (params.offset >= 0) this.state.confirmBelow(params.offset);
      else this.state.confirmBelow(this.lastIds(-params.offset));
    }
    if (params.allowed_updates !== undefined) this.state.allowedUpdates = params.allowed_updates;
    const limit = Math.min(100, Math.max(1, params.limit ?? 100));
    const take = (): TgUpdate[] => {
      const batch = this.state.waiting(this.state.allowedUpdates).slice(0, limit);
      for (const p of batch) p.markDelivered();
      return batch.map((p) => p.update);
    };
    const now = take();
    const timeoutMs = Math.max(0, params.timeout ?? 0) * 1000;
    if (now.length > 0 || timeoutMs === 0) return Promise.resolve(ok(now));

    return new Promise<ApiAnswer>((resolve) => {
      let done = false;
      const finish = (answer: ApiAnswer) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        unsubscribe();
        if (this.active === entry) this.active = undefined;
        resolve(answer);
      };
      const entry = { finish };
      this.active = entry;
      const timer = setTimeout(() => finish(ok([])), timeoutMs);
      const unsubscribe = this.state.onUpdate(() => {
        // Deliver on the next tick so several injected updates can travel in one batch.
        setImmediate(() => {
          if (done) return;
          const batch = take();
          if (batch.length > 0) finish(ok(batch));
        });
      });
      void closed.then(() => finish(ok([])));
    });
  }

  /** Ends a waiting poll (used when a webhook is set or the emulator closes). */
  cancel(): void {
    this.active?.finish(ok([]));
  }

  private lastIds(n: number): number {
    const ids = this.state.pending.map((p) => p.update.update_id);
    return ids.length > n ? ids[ids.length - n]! : (ids[0] ?? 0);
  }
}

/** A record of one webhook POST the emulator made. */
export interface WebhookAttempt {
  updateId: number;
  status: number | "error";
  at: number;
}

/** Pushes queued updates to the webhook, one at a time, retrying until the bot answers 2xx. */
export class WebhookPusher {
  private readonly state: EmulatorState;
  private readonly retryDelayMs: number;
  readonly attempts: WebhookAttempt[] = [];
  private running = false;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;

  constructor(state: EmulatorState, retryDelayMs: number) {
    this.state = state;
    this.retryDelayMs = retryDelayMs;
  }

  start(): void {
    this.unsubscribe ??= this.state.onUpdate(() => void this.pump());
    void this.pump();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
  }

  private async pump(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      while (!this.stopped && this.state.webhook) {
        const hook = this.state.webhook;
        const next = this.state.waiting(hook.allowedUpdates)[0];
        if (!next) break;
        const status = await this.post(hook.url, hook.secretToken, next.update);
        this.attempts.push({ updateId: next.update.update_id, status, at: Date.now() });
        if (typeof status === "number" && status >= 200 && status < 300) {
          next.markDelivered();
          this.state.dropUpdate(next.update.update_id);
        } else {
          await new Promise((r) => setTimeout(r, this.retryDelayMs));
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async post(url: string, secret: string | undefined, update: TgUpdate): Promise<number | "error"> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (secret) headers["x-telegram-bot-api-secret-token"] = secret;
    try {
      const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(update), signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return "error";
    }
  }
}
