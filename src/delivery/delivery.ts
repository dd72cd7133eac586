/**
 * Delivery: one outbound queue per target, created on first use, for every channel. The gateway
 * posts progress lines, answers and approval cards through it; see target-queue.ts.
 */
import type { Logger } from "pino";
import { targetKeyOf, type ReplyTarget } from "../envelope.ts";
import type { DeliveryPacing, OutboundPort } from "../ports.ts";
import type { Observer } from "../observe/observer.ts";
import { TargetQueue } from "./target-queue.ts";

export interface ChannelOutlet {
  port: OutboundPort;
  maxMessageChars: number;
  pacing: DeliveryPacing;
}

export class Delivery {
  private readonly queues = new Map<string, TargetQueue>();
  private readonly outlets = new Map<string, ChannelOutlet>();
  /** When each shared limit has its next free slot. */
  private readonly sharedNext = new Map<string, number>();
  private readonly log: Logger;
  private readonly observer: Observer;

  constructor(log: Logger, observer: Observer) {
    this.log = log;
    this.observer = observer;
  }

  /** Registers how a channel sends. */
  addChannel(channel: string, outlet: ChannelOutlet): void {
    this.outlets.set(channel, outlet);
  }

  /** The queue of a target (created on first use). */
  queue(target: ReplyTarget): TargetQueue {
    const key = targetKeyOf(target);
    let q = this.queues.get(key);
    if (!q) {
      if (this.queues.size > 5000) for (const [k, old] of this.queues) if (old.idle) this.queues.delete(k);
      const outlet = this.outlets.get(target.channel);
      if (!outlet) throw new Error(`no channel registered for delivery: ${target.channel}`);
      q = new TargetQueue({
        port: outlet.port, target, maxMessageChars: outlet.maxMessageChars, minIntervalMs: outlet.pacing.intervalFor?.(target) ?? outlet.pacing.minIntervalMs,
        progressMode: outlet.pacing.progressMode,
        beforeSend: (t) => this.takeSharedSlots(outlet.pacing, t), log: this.log.child({ target: key }), observer: this.observer,
      });
      this.queues.set(key, q);
    }
    return q;
  }

  progress(target: ReplyTarget, line: string, traceId?: string): void {
    this.queue(target).progress(line, traceId, target);
  }

  /** Posts text; `as: "notice"` for messages that do not answer (queued, refused). */
  send(target: ReplyTarget, text: string, as: "notice" | "reply" = "reply", traceId?: string): Promise<void> {
    return this.queue(target).text(text, as, traceId, target);
  }

  run<T>(target: ReplyTarget, action: () => Promise<T>, traceId?: string): Promise<T> {
    return this.queue(target).action(action, traceId);
  }

  /**
   * Reserves the next slot of each limit the target shares with other targets, then waits for it.
   * Reserving first keeps the limit even when several queues send at the same moment.
   */
  private async takeSharedSlots(pacing: DeliveryPacing, target: ReplyTarget): Promise<void> {
    let wait = 0;
    const now = Date.now();
    for (const limit of pacing.sharedLimits?.(target) ?? []) {
      const at = Math.max(now, this.sharedNext.get(limit.key) ?? 0);
      this.sharedNext.set(limit.key, at + limit.intervalMs);
      wait = Math.max(wait, at - now);
    }
    if (this.sharedNext.size > 10_000) for (const [k, t] of this.sharedNext) if (t < now) this.sharedNext.delete(k);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  /** Waits until every queue is empty, or `timeoutMs` passes. */
  async flush(timeoutMs = 10_000): Promise<void> {
    const all = Promise.all([...this.queues.values()].map((q) => q.drained()));
    await Promise.race([all, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    for (const [key, q] of this.queues) if (q.idle) this.queues.delete(key);
  }
}
