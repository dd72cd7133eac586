/**
 * Delivery: one outbound queue per target, for every channel. The gateway posts progress, answers
 * and approval cards through it; see target-queue.ts. A task's progress shows the channel's way
 * (`taskProgress`): one live status message edited within the platform's edit budget
 * (status-message.ts), a message per batch of lines, or nothing. A queue is made on first use and
 * dropped as soon as it has sent everything, so the queues follow the conversations busy right now,
 * not every conversation the bot has served. What must outlive a queue — when its target may send
 * next, the slots of limits that targets share, and holds after a 429 that named more than one
 * target — is kept in a SendClock, which forgets every time that has passed.
 *
 * Pacing only ever waits on what it belongs to: a target's own interval, the shared limits the
 * adapter declares for that target, and holds for that target's conversation or channel.
 */
import type { Logger } from "pino";
import { targetKeyOf, type ReplyTarget } from "../envelope.ts";
import type { DeliveryPacing, OutboundPort, RateLimitedError } from "../ports.ts";
import type { Observer } from "../observe/observer.ts";
import { SendClock } from "./send-clock.ts";
import { readStatusSnapshot, StatusMessage } from "./status-message.ts";
import { NO_PROGRESS, ProgressLines, type ProgressStyle, type TaskProgress } from "./task-progress.ts";
import { TargetQueue } from "./target-queue.ts";

export interface ChannelOutlet {
  port: OutboundPort;
  maxMessageChars: number;
  pacing: DeliveryPacing;
  /** How a task's progress shows (the config's `progress`; default `status`, which needs `port.edit`, else `lines`). */
  progress?: ProgressStyle;
}

/**
 * An idle queue that still keeps an open progress message (`edit` mode, a tool running) is dropped
 * after this long without activity, when queues pile up; its next line then starts a new message.
 */
const STALE_PROGRESS_MS = 10 * 60_000;
const MIN_SWEEP = 256;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Clock keys: everything a target's sends wait on besides its own queue. */
const targetPacingKey = (key: string) => `target:${key}`;
const limitKey = (target: ReplyTarget, key: string) => `limit:${target.channel}:${key}`;
const conversationHoldKey = (t: ReplyTarget) => `hold:conversation:${t.channel}:${t.account ?? ""}:${t.conversationId}`;
const botHoldKey = (t: ReplyTarget) => `hold:bot:${t.channel}:${t.account ?? ""}`;
/** Set after a 429 in a conversation whose platform states no limit: pacing applies there until it passes. */
const recentlyLimitedKey = (t: ReplyTarget) => `limited:${t.channel}:${t.account ?? ""}:${t.conversationId}`;
/**
 * How long a conversation stays paced after a 429, beyond the wait the platform named, where pacing
 * applies only after one: none — a 429 slows what it names for as long as it says, no longer.
 */
const PACED_AFTER_RATE_LIMIT_MS = 0;

export class Delivery {
  private readonly queues = new Map<string, TargetQueue>();
  private readonly outlets = new Map<string, ChannelOutlet>();
  private readonly clock = new SendClock();
  /** The number of queues at which stale idle ones are swept next (doubles with the live ones). */
  private sweepAt = MIN_SWEEP;
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

  /** The queue of a target (made on first use; paced from the last send to that target). */
  queue(target: ReplyTarget): TargetQueue {
    const key = targetKeyOf(target);
    const existing = this.queues.get(key);
    if (existing) return existing;
    const outlet = this.outletOf(target);
    this.sweepStaleQueues();
    const interval = outlet.pacing.intervalFor?.(target) ?? outlet.pacing.minIntervalMs;
    const q: TargetQueue = new TargetQueue({
      port: outlet.port, target, maxMessageChars: outlet.maxMessageChars, minIntervalMs: interval,
      intervalNow: () => (this.paced(outlet.pacing, target) ? interval : 0),
      progressMode: outlet.pacing.progressMode,
      notBefore: this.clock.freeAt(targetPacingKey(key)),
      beforeSend: (t) => this.waitForSharedLimits(outlet.pacing, t),
      onRateLimited: (t, err) => this.holdFor(t, err),
      onIdle: () => this.release(key, q),
      log: this.log.child({ target: key }), observer: this.observer,
    });
    this.queues.set(key, q);
    return q;
  }

  progress(target: ReplyTarget, line: string, traceId?: string): void {
    this.queue(target).progress(line, traceId, target);
  }

  /**
   * The progress of one task (a turn) answering in `target`, shown the channel's way: a live status
   * message where the channel can edit (`status`), progress lines (`lines`), or nothing (`off`).
   * `resume`: a snapshot of the task's progress a previous process took (TaskProgress.snapshot),
   * so that a turn resumed after a restart goes on in the same status message. `onPosted`: called
   * once the status message is posted (so that its snapshot can be kept against a crash).
   */
  taskProgress(target: ReplyTarget, traceId?: string, resume?: string, onPosted?: () => void): TaskProgress {
    const outlet = this.outlets.get(target.channel);
    const style = outlet?.progress ?? "status";
    // A channel delivery does not know cannot take the answer either; that failure is reported there.
    if (!outlet || style === "off") return NO_PROGRESS;
    const { port } = outlet;
    const edit = port.edit?.bind(port);
    if (style === "lines" || !edit) return new ProgressLines((line) => this.progress(target, line, traceId));
    return new StatusMessage({
      inQueue: (call) => this.run(target, call, traceId),
      send: async (text) => (await port.send(target, { text, kind: "progress" })).id,
      edit: (messageId, text) => edit(target, messageId, { text, kind: "progress" }),
      nextEditAt: () => this.nextEditAt(outlet.pacing, target),
      takeEditSlot: () => this.takeEditSlot(outlet.pacing, target),
      line: (text) => this.progress(target, text, traceId),
      maxMessageChars: outlet.maxMessageChars,
      log: this.log.child({ target: targetKeyOf(target), traceId }),
      posted: onPosted,
    }, readStatusSnapshot(resume));
  }

  /** Posts text; `as: "notice"` for messages that do not answer (queued, refused). */
  send(target: ReplyTarget, text: string, as: "notice" | "reply" = "reply", traceId?: string): Promise<void> {
    return this.queue(target).text(text, as, traceId, target);
  }

  run<T>(target: ReplyTarget, action: () => Promise<T>, traceId?: string): Promise<T> {
    return this.queue(target).action(action, traceId);
  }

  /** A link that opens a message posted in `target` (an approval card), where its platform has one. */
  async permalink(target: ReplyTarget, messageId: string): Promise<string | undefined> {
    const { port } = this.outletOf(target);
    return port.permalink?.(target, messageId);
  }

  /** Queues that exist right now: sending, or keeping an open progress message. */
  get openQueues(): number {
    return this.queues.size;
  }

  /** Pacing times kept for targets, shared limits and holds (only those still running, plus a few awaiting a sweep). */
  get pacingEntries(): number {
    return this.clock.size;
  }

  /** Waits until every queue is empty, or `timeoutMs` passes. */
  async flush(timeoutMs = 10_000): Promise<void> {
    const all = Promise.all([...this.queues.values()].map((q) => q.drained()));
    await Promise.race([all, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    for (const [key, q] of this.queues) if (q.idle) this.drop(key, q);
  }

  /**
   * Before each send: waits out any hold on the target's conversation or channel, then reserves the
   * next slot of each limit the target shares with other targets and waits for it. Reserving first
   * keeps the limit even when several queues send at the same moment; a hold that arrives meanwhile
   * is waited out too, with fresh slots after it.
   */
  private async waitForSharedLimits(pacing: DeliveryPacing, target: ReplyTarget): Promise<void> {
    const holds = [conversationHoldKey(target), botHoldKey(target)];
    const heldUntil = () => Math.max(...holds.map((k) => this.clock.freeAt(k)));
    for (;;) {
      const held = heldUntil() - Date.now();
      if (held > 0) {
        await sleep(held);
        continue;
      }
      const now = Date.now();
      let at = now;
      const limits = this.paced(pacing, target) ? (pacing.sharedLimits?.(target) ?? []) : [];
      for (const limit of limits) at = Math.max(at, this.clock.reserve(limitKey(target, limit.key), limit.intervalMs, now));
      if (at > now) await sleep(at - now);
      if (heldUntil() <= Date.now()) return;
    }
  }

  /** The edit limits the target's platform declares (default: one edit per `minIntervalMs` per target), as clock keys. */
  private editLimits(pacing: DeliveryPacing, target: ReplyTarget): Array<{ key: string; intervalMs: number }> {
    const declared = pacing.editLimits?.(target) ?? [{ key: `edit:${targetKeyOf(target)}`, intervalMs: pacing.minIntervalMs }];
    return declared.map((l) => ({ key: limitKey(target, l.key), intervalMs: l.intervalMs }));
  }

  /** When every edit limit of the target is free. Edits are always paced, even where sends are not: a status message can wait. */
  private nextEditAt(pacing: DeliveryPacing, target: ReplyTarget): number {
    return Math.max(Date.now(), ...this.editLimits(pacing, target).map((l) => this.clock.freeAt(l.key)));
  }

  /** Takes a slot of every edit limit now, if all are free: the next edit goes an interval after this one started. */
  private takeEditSlot(pacing: DeliveryPacing, target: ReplyTarget): boolean {
    const now = Date.now();
    const limits = this.editLimits(pacing, target);
    if (limits.some((l) => this.clock.freeAt(l.key) > now)) return false;
    for (const l of limits) this.clock.holdUntil(l.key, now + l.intervalMs, now);
    return true;
  }

  private outletOf(target: ReplyTarget): ChannelOutlet {
    const outlet = this.outlets.get(target.channel);
    if (!outlet) throw new Error(`no channel registered for delivery: ${target.channel}`);
    return outlet;
  }

  /** A 429 that named the conversation or the whole bot holds every queue it covers; one for the target only holds that queue, which waits by itself. */
  private holdFor(target: ReplyTarget, err: RateLimitedError): void {
    this.clock.holdUntil(recentlyLimitedKey(target), Date.now() + Math.max(err.retryAfterMs, 0) + PACED_AFTER_RATE_LIMIT_MS);
    if (err.scope === "target") return;
    const key = err.scope === "bot" ? botHoldKey(target) : conversationHoldKey(target);
    this.clock.holdUntil(key, Date.now() + err.retryAfterMs);
  }

  /** Whether the target's pacing is in force now: always, or for a while after a 429 where the platform states no limit. */
  private paced(pacing: DeliveryPacing, target: ReplyTarget): boolean {
    return !pacing.paceOnlyAfterRateLimit?.(target) || this.clock.freeAt(recentlyLimitedKey(target)) > Date.now();
  }

  /** Drops a queue that has nothing left to do, keeping when its target may send next. */
  private release(key: string, q: TargetQueue): void {
    if (this.queues.get(key) === q && q.disposable) this.drop(key, q);
  }

  private drop(key: string, q: TargetQueue): void {
    this.queues.delete(key);
    this.clock.holdUntil(targetPacingKey(key), q.pacedUntil);
  }

  /** When queues pile up, drops idle ones that kept a progress message open for long (amortized: the threshold doubles with what stays). */
  private sweepStaleQueues(): void {
    if (this.queues.size < this.sweepAt) return;
    const staleBefore = Date.now() - STALE_PROGRESS_MS;
    for (const [key, q] of this.queues) if (q.idle && q.lastActive < staleBefore) this.drop(key, q);
    this.sweepAt = Math.max(MIN_SWEEP, 2 * this.queues.size);
  }
}
