/**
 * The outbound queue of one target (a conversation, or a thread in it). Everything posted
 * there goes through it in order: progress lines (coalesced when they pile up), answers (split
 * at the channel's limit) and actions such as approval cards. It paces sends, waits out a 429
 * for as long as the platform advises, retries other failures a bounded number of times, and
 * keeps trying the final answer while the platform accepts messages at all.
 */
import type { Logger } from "pino";
import type { ReplyTarget } from "../envelope.ts";
import { MessageRejectedError, RateLimitedError, type OutboundPort } from "../ports.ts";
import type { Observer } from "../observe/observer.ts";
import { scrubSecrets } from "../observe/scrub.ts";
import { splitMessage } from "./chunking.ts";
import { classifySendFailure } from "./send-errors.ts";

type Item =
  | { kind: "progress"; text: string; traceId?: string; target?: ReplyTarget }
  | { kind: "text"; text: string; as: "notice" | "reply"; traceId?: string; target?: ReplyTarget; settle: (err?: Error) => void }
  | { kind: "action"; run: () => Promise<void>; traceId?: string; settle: (err?: Error) => void };

export interface TargetQueueOptions {
  port: OutboundPort;
  target: ReplyTarget;
  maxMessageChars: number;
  minIntervalMs: number;
  /** The interval in force now, when it changes with what the platform said (default: always `minIntervalMs`). */
  intervalNow?: () => number;
  log: Logger;
  observer: Observer;
  /** Attempts for failures other than 429 (default 3). */
  maxAttempts?: number;
  /** How many 429s in a row one message waits out before giving up (default 20). */
  maxRateLimitWaits?: number;
  /** `edit`: progress lines grow one message, edited in place, until the next answer (needs port.edit). */
  progressMode?: "lines" | "edit";
  /** First wait after a failed send; it doubles each time, up to 30 s (default 300 ms). */
  retryBaseMs?: number;
  /** Waits for the slots of limits this target shares with others (see DeliveryPacing.sharedLimits). */
  beforeSend?: (target: ReplyTarget) => Promise<void>;
  /** Told of every 429, so a hold that names more than this target reaches the other queues it covers. */
  onRateLimited?: (target: ReplyTarget, err: RateLimitedError) => void;
  /** When the first send may go: the pacing an earlier queue of the same target left behind (default now). */
  notBefore?: number;
  /** Called each time everything queued is sent and nothing runs. */
  onIdle?: () => void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class TargetQueue {
  private readonly items: Item[] = [];
  private running = false;
  /** When the next send may go: the last send (or failed attempt) plus the interval. */
  private nextSendAt: number;
  private lastActiveAt = Date.now();
  private readonly o: Required<TargetQueueOptions>;
  private idleWaiters: Array<() => void> = [];
  /** The progress message being edited in place, in `edit` mode. */
  private progressMessage?: { id: string; text: string };
  /** The trace id of the item being sent, for the delivery events. */
  private traceId?: string;
  /**
   * Where the item being sent goes: the queue's conversation and thread, replying to that item's own
   * message (one queue serves every message of a thread, each answer replies to its own question).
   */
  private target: ReplyTarget;

  constructor(options: TargetQueueOptions) {
    this.o = {
      maxAttempts: 3, maxRateLimitWaits: 20, progressMode: "lines", retryBaseMs: 300, beforeSend: async () => {}, onRateLimited: () => {},
      notBefore: 0, onIdle: () => {}, intervalNow: () => options.minIntervalMs, ...options,
    };
    this.nextSendAt = this.o.notBefore;
    this.target = options.target;
  }

  /** Queues a progress line; lines that pile up are posted together. */
  progress(line: string, traceId?: string, target?: ReplyTarget): void {
    this.items.push({ kind: "progress", text: scrubSecrets(line), traceId, target });
    this.kick();
  }

  /** Queues text (split at the limit); resolves once every part is posted. */
  text(text: string, as: "notice" | "reply" = "reply", traceId?: string, target?: ReplyTarget): Promise<void> {
    return new Promise((resolve, reject) => {
      this.items.push({ kind: "text", text: scrubSecrets(text), as, traceId, target, settle: (err) => (err ? reject(err) : resolve()) });
      this.kick();
    });
  }

  /** Runs a platform call in this target's order and pacing, retried on 429. */
  action<T>(run: () => Promise<T>, traceId?: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let value: T;
      this.items.push({
        kind: "action",
        traceId,
        run: async () => {
          value = await run();
        },
        settle: (err) => (err ? reject(err) : resolve(value)),
      });
      this.kick();
    });
  }

  get idle(): boolean {
    return !this.running && this.items.length === 0;
  }

  /**
   * Idle, and keeping nothing the next item needs, so the queue may be dropped and made again on
   * next use (given `pacedUntil` as its `notBefore`). In `edit` mode an open progress message is kept:
   * the next line of that task edits it.
   */
  get disposable(): boolean {
    return this.idle && !this.progressMessage;
  }

  /** When the next send to this target may go, by this queue's own pacing. */
  get pacedUntil(): number {
    return this.nextSendAt;
  }

  /** When the queue last sent or was given something. */
  get lastActive(): number {
    return this.lastActiveAt;
  }

  /** Resolves when everything queued so far is sent (or given up). */
  drained(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private kick(): void {
    this.lastActiveAt = Date.now();
    if (this.running) return;
    this.running = true;
    void this.drain().finally(() => {
      this.running = false;
      this.lastActiveAt = Date.now();
      if (this.items.length) return this.kick();
      for (const w of this.idleWaiters.splice(0)) w();
      this.o.onIdle();
    });
  }

  private async pace(): Promise<void> {
    const wait = this.nextSendAt - Date.now();
    if (wait > 0) await sleep(wait);
  }

  private async drain(): Promise<void> {
    while (this.items.length) {
      await this.pace();
      const item = this.items[0]!;
      this.traceId = item.traceId;
      this.target = ("target" in item && item.target) || this.o.target;
      if (item.kind === "progress") {
        const lines: string[] = [];
        let size = 0;
        const replyTo = this.target.replyToMessageId;
        while (this.items[0]?.kind === "progress" && ((this.items[0].target ?? this.o.target).replyToMessageId === replyTo || !lines.length)) {
          const next = this.items[0].text;
          if (lines.length && size + next.length + 1 > this.o.maxMessageChars) break;
          lines.push(next);
          size += next.length + 1;
          this.items.shift();
        }
        if (lines.length > 1) this.o.observer.emit({ event: "delivery.coalesced", traceId: this.traceId, lines: lines.length });
        await this.postProgress(collapseRepeats(lines).join("\n")).catch((err: Error) =>
          this.o.log.warn({ err: err.message }, "progress line dropped after retries"),
        );
        continue;
      }
      this.items.shift();
      this.progressMessage = undefined;
      try {
        if (item.kind === "text") {
          for (const part of splitMessage(item.text, this.o.maxMessageChars)) {
            await this.pace();
            await this.sendText(part, item.as, true);
          }
        } else {
          await this.withRetries(() => item.run(), true);
        }
        item.settle();
      } catch (err) {
        this.o.log.error({ traceId: item.traceId, err: (err as Error).message }, "delivery failed");
        item.settle(err as Error);
      }
    }
  }

  /** Posts progress lines: a new message, or in `edit` mode an edit of the current progress message. */
  private async postProgress(text: string): Promise<void> {
    const edit = this.o.port.edit?.bind(this.o.port);
    const current = this.progressMessage;
    if (this.o.progressMode === "edit" && edit && current && current.text.length + text.length + 1 <= this.o.maxMessageChars) {
      const combined = `${current.text}\n${text}`;
      await this.withRetries(() => edit(this.target, current.id, { text: combined, kind: "progress" }), false);
      current.text = combined;
      return;
    }
    const id = await this.sendText(text, "progress", false);
    if (this.o.progressMode === "edit" && id) this.progressMessage = { id, text };
  }

  /** Sends one message that fits the limit; re-splits if the platform still finds it too long. */
  private async sendText(text: string, kind: "progress" | "notice" | "reply", important: boolean, plain = false): Promise<string | undefined> {
    try {
      let id: string | undefined;
      await this.withRetries(async () => {
        id = (await this.o.port.send(this.target, { text, plain, kind })).id;
      }, important);
      return id;
    } catch (err) {
      if (err instanceof MessageRejectedError && err.reason === "too_long" && text.length > 32) {
        let last: string | undefined;
        for (const part of splitMessage(text, Math.floor(text.length / 2))) last = await this.sendText(part, kind, important, plain);
        return last;
      }
      if (err instanceof MessageRejectedError && err.reason === "bad_markup" && !plain) {
        return this.sendText(text, kind, important, true);
      }
      throw err;
    }
  }

  private async withRetries(call: () => Promise<void>, important: boolean): Promise<void> {
    let failures = 0;
    let rateLimits = 0;
    for (;;) {
      try {
        await this.o.beforeSend(this.target);
        await call();
        this.nextSendAt = Date.now() + this.o.intervalNow();
        this.o.observer.emit({ event: "delivery.sent", traceId: this.traceId, target: this.o.target.conversationId, attempts: failures + rateLimits + 1 });
        return;
      } catch (err) {
        this.nextSendAt = Date.now() + this.o.intervalNow();
        if (err instanceof RateLimitedError) {
          this.nextSendAt = Math.max(this.nextSendAt, Date.now() + err.retryAfterMs);
          rateLimits++;
          this.o.onRateLimited(this.target, err);
          if (rateLimits > this.o.maxRateLimitWaits * (important ? 3 : 1)) throw err;
          this.o.observer.emit({
            event: "delivery.rate_limited", traceId: this.traceId, target: this.o.target.conversationId, scope: err.scope, retryAfterMs: err.retryAfterMs, attempt: rateLimits,
          });
          await sleep(Math.max(err.retryAfterMs, 50));
          continue;
        }
        if (err instanceof MessageRejectedError) throw err;
        const failure = classifySendFailure(err);
        if (failure === "permanent") throw err;
        failures++;
        // An answer is worth waiting for: through a platform outage it is retried for about two minutes.
        if (failures >= (important && failure === "transient" ? this.o.maxAttempts + 6 : this.o.maxAttempts)) throw err;
        this.o.log.warn({ traceId: this.traceId, err: (err as Error).message, attempt: failures }, "send failed; retrying");
        await sleep(Math.min(this.o.retryBaseMs * 2 ** failures, 30_000));
      }
    }
  }
}

/** Identical lines that piled up are posted once, with how many there were: "⏳ Queued … (×5)". */
export function collapseRepeats(lines: string[]): string[] {
  const out: string[] = [];
  let count = 0;
  lines.forEach((line, i) => {
    count++;
    if (lines[i + 1] === line) return;
    out.push(count > 1 ? `${line} (×${count})` : line);
    count = 0;
  });
  return out;
}
