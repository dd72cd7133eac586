/**
 * Sessions shared by several replicas of the bot on one database. A message lands in its
 * session's durable inbox on whichever replica took it; the replica that holds the session's
 * lease drains the inbox in order, one turn at a time, renewing the lease while it works and
 * checking its fencing token before every write. A turn that parks lets go of the lease: the
 * replica that takes the click (or the timeout, or /stop) resumes it. A sweep every few seconds
 * picks up what a dead replica left — its inbox, its checkpoints, its decided cards, and the messages
 * it had accepted but not answered (inflight.ts).
 */
import type { Logger } from "pino";
import { randomBytes } from "node:crypto";
import type { IngressEnvelope } from "../envelope.ts";
import type { PendingApprovals } from "../approval/pending-approvals.ts";
import type { Delivery } from "../delivery/delivery.ts";
import { decodeTurnRecord } from "../engine/turn-record.ts";
import type { Observer } from "../observe/observer.ts";
import type { Coordination, SessionLease } from "../store/coordination.ts";
import type { Store } from "../store/store.ts";
import type { SessionLanes } from "./lanes.ts";
import type { TurnDriver } from "./turn-driver.ts";
import type { ChannelRuntime } from "./gateway.ts";
import { closeLeftProgress, envelopeOf, INFLIGHT, neverStartOver, postLeftAnswer, readInflight, RESTARTED_NOTICE, TASK_PROGRESS } from "./inflight.ts";

export interface ReplicaSessionsOptions {
  coordination: Coordination;
  store: Store;
  lanes: SessionLanes;
  driver: TurnDriver;
  approvals: PendingApprovals;
  delivery: Delivery;
  observer: Observer;
  log: Logger;
  /** The channel runtime a session's turns run with here; undefined when this replica does not serve it. */
  runtimeOf: (channel: string) => ChannelRuntime | undefined;
  /** The channels this replica serves. */
  channelNames: () => string[];
  /** How long a lease lasts without renewal: how soon a dead replica's threads are picked up. */
  leaseTtlMs?: number;
  /** How often this replica looks for work nobody holds. */
  sweepMs?: number;
}

/**
 * How many sessions a replica takes on at once, per turn slot, not counting those whose answer is
 * being posted: one computing and one lined up behind it (taking its lease, loading its history).
 * Threads past that stay in the shared inbox, unleased, for whichever replica has room first.
 */
const DRAINS_PER_SLOT = 2;
/** The least time between two looks for threads nobody holds when a drain ends with room to spare. */
const LOOK_AGAIN_MS = 100;

/** How often a replica looks for stops asked (by `/stop` on another replica) for the sessions it drains. */
const STOP_LOOK_MS = 400;

/** Time a message may be accepted but not yet in the inbox (the push in flight) before it counts as lost. */
const UNFINISHED_GRACE_MS = 3_000;

export class ReplicaSessions {
  private readonly o: Required<ReplicaSessionsOptions>;
  /** Sessions kicked while this replica was already draining them: look again before letting go. */
  private readonly again = new Set<string>();
  /** Sessions kicked while this replica had no room, oldest first: drained here as room frees, unless another replica took them first. */
  private readonly waitingForRoom = new Set<string>();
  /** Drains here whose turn is to compute or computes (see takePlace). */
  private drains = 0;
  private lastLook = 0;
  private sweeper?: NodeJS.Timeout;
  /** The leases of the sessions drained here, by session. */
  private readonly held = new Map<string, SessionLease>();
  /** Looks for stop requests while anything is drained here. */
  private stops?: NodeJS.Timeout;
  private lookingForStops = false;
  /** Renews the held leases while anything is drained here. */
  private renewals?: NodeJS.Timeout;
  private renewing = false;
  private closed = false;

  constructor(options: ReplicaSessionsOptions) {
    this.o = { ...options, leaseTtlMs: options.leaseTtlMs ?? 10_000, sweepMs: options.sweepMs ?? 1_000 };
    // A decision on a parked turn: this replica takes it over (the turn's own replica let it go).
    options.approvals.onSettled(({ record }) => {
      this.kick(record.sessionKey);
      return false;
    });
  }

  /** Starts the sweep for orphaned work. */
  start(): void {
    const tick = () => {
      if (this.closed) return;
      void this.sweep()
        .catch((err: Error) => this.o.log.warn({ err: err.message }, "replica sweep failed"))
        .finally(() => {
          if (!this.closed) this.sweeper = setTimeout(tick, this.o.sweepMs).unref();
        });
    };
    this.sweeper = setTimeout(tick, 50).unref();
  }

  /**
   * Adds an accepted message to its session's inbox, with its in-flight mark (`mark`), unless
   * `maxQueued` already wait there; makes sure some replica drains it. `busy`: something was ahead
   * of it (a turn working on the session, here or elsewhere, or messages waiting).
   */
  async accept(
    env: IngressEnvelope, sessionKey: string, acceptedAt: number, options: { maxQueued: number; mark: { key: string; value: string } },
  ): Promise<{ queued: false } | { queued: true; ahead: number; busy: boolean }> {
    // Looked at before the push: a sweep may take the thread the moment its message is in the inbox.
    const here = this.o.lanes.busy(sessionKey);
    const admitted = await this.o.coordination.admit(env, sessionKey, acceptedAt, options);
    if (!admitted.queued) return { queued: false };
    this.kick(sessionKey);
    return { queued: true, ahead: admitted.ahead, busy: here || admitted.working || admitted.ahead > 0 };
  }

  /**
   * Drains the session here unless this replica already does (then it looks again before letting
   * go). Without room here (every drain taken, see DRAINS_PER_SLOT), the thread waits its turn here,
   * while its messages wait in the shared inbox for any replica with room.
   */
  kick(sessionKey: string): void {
    if (this.closed) return;
    if (!this.o.runtimeOf(sessionKey.split(":")[0]!)) return;
    if (this.o.lanes.busy(sessionKey)) {
      this.again.add(sessionKey);
      return;
    }
    if (this.room <= 0) {
      this.waitingForRoom.add(sessionKey);
      return;
    }
    this.waitingForRoom.delete(sessionKey);
    const place = this.takePlace();
    this.o.lanes.enqueue(sessionKey, async () => {
      let lookAgain = false;
      try {
        lookAgain = await this.drain(sessionKey, place);
      } finally {
        place.leave();
        // Once the lane has let go (after this job), so that the session can be kicked again.
        setImmediate(() => {
          if (lookAgain) this.waitingForRoom.add(sessionKey);
          this.makeRoom();
        });
      }
    }, { force: true });
  }

  private get room(): number {
    return this.o.lanes.concurrency * DRAINS_PER_SLOT - this.drains;
  }

  /**
   * A drain's place in the room: held while its session's turn is to compute or computes, left
   * while the turn's answer is posted (a thread the platform holds back keeps its lease, not a place).
   */
  private takePlace(): { take(): void; leave(): void } {
    let held = false;
    const place = {
      take: () => {
        if (held) return;
        held = true;
        this.drains++;
      },
      leave: () => {
        if (!held) return;
        held = false;
        this.drains--;
        setImmediate(() => this.makeRoom());
      },
    };
    place.take();
    return place;
  }

  /** Takes waiting threads while there is room; with room to spare, looks for threads nobody holds. */
  private makeRoom(): void {
    for (const sessionKey of this.waitingForRoom) {
      if (this.closed || this.room <= 0) return;
      this.waitingForRoom.delete(sessionKey);
      this.kick(sessionKey);
    }
    if (!this.closed && this.room > 0 && Date.now() - this.lastLook >= LOOK_AGAIN_MS) {
      void this.takeOrphans().catch((err: Error) => this.o.log.warn({ err: err.message }, "looking for threads nobody holds failed"));
    }
  }

  /** Kicks sessions with work and no live lease, oldest first, as far as there is room here. */
  private async takeOrphans(): Promise<void> {
    this.lastLook = Date.now();
    for (const sessionKey of await this.o.coordination.orphaned()) {
      if (this.closed || this.room <= 0) return;
      this.kick(sessionKey);
    }
  }

  /**
   * `/stop` for a session whose turn is not in this process: a parked turn's card is cancelled (the
   * turn then ends as stopped), a turn computing on another replica is asked to stop. Undefined when
   * nothing runs anywhere.
   */
  async stopElsewhere(sessionKey: string): Promise<string | undefined> {
    const parked = (await this.o.store.listTurnsOf(sessionKey)).find((t) => t.waitingApprovalId);
    if (parked?.waitingApprovalId && (await this.o.approvals.cancel(parked.waitingApprovalId))) {
      return "🛑 Stopping the task that waits for approval here; it will not run.";
    }
    if (await this.o.coordination.requestStop(sessionKey)) {
      return "🛑 Stopping the current task (it runs on another replica). Finished steps keep their results; the rest will not run.";
    }
    return undefined;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.sweeper);
    clearInterval(this.stops);
    this.stops = undefined;
    clearInterval(this.renewals);
    this.renewals = undefined;
    this.waitingForRoom.clear();
  }

  /** Drains one session's saved turn and inbox under its lease; true when it should be looked at again. */
  private async drain(sessionKey: string, place: { take(): void; leave(): void }): Promise<boolean> {
    const { coordination, driver, log } = this.o;
    const lease = await coordination.acquire(sessionKey, this.o.leaseTtlMs).catch((err: Error) => {
      log.warn({ sessionKey, err: err.message }, "session lease could not be taken");
      return undefined;
    });
    if (!lease) return false;
    this.o.observer.emit({ event: "lease.acquired", sessionKey, token: lease.token, takenOver: lease.takenOver });
    // Watched from here on, so that a stop asked while a taken-over session is adopted is not lost.
    const watch = this.watch(lease);
    const fence = () => coordination.holds(lease).catch(() => false);
    let parked = false;
    // Whether a saved turn of the session may be in the store: one is saved only under the session's
    // lease, so after a turn of this drain finished (its record gone with it), none is; the inbox's
    // take is fenced by itself. The lease was checked when it was taken, and again before a saved
    // turn is looked for after anything else.
    let mayHaveSaved = true;
    let leaseJustChecked = true;
    // Let go by the take that found the inbox empty (or lost already).
    let released = false;
    try {
      if (lease.takenOver) await this.adopt(lease);
      for (;;) {
        this.again.delete(sessionKey);
        if (this.closed) break;
        if (mayHaveSaved && !leaseJustChecked && !(await fence())) break;
        leaseJustChecked = false;
        const [saved] = mayHaveSaved ? await this.o.store.listTurnsOf(sessionKey) : [];
        if (saved) {
          const runtime = this.o.runtimeOf(saved.channel);
          if (!runtime) break;
          const decision = saved.waitingApprovalId ? await this.o.approvals.claim(saved.waitingApprovalId) : undefined;
          if (saved.waitingApprovalId && !decision) {
            parked = true; // still waiting for a person; whoever takes the decision resumes it
            break;
          }
          let record;
          try {
            record = decodeTurnRecord(saved);
          } catch (err) {
            log.error({ turnId: saved.turnId, err: (err as Error).message }, "a saved turn could not be read; its sender is told it was not finished");
            await neverStartOver(this.o.store, saved.traceId);
            await this.o.store.deleteTurn(saved.turnId);
            continue;
          }
          place.take();
          if ((await driver.continueSaved(record, runtime, decision, { waitParked: false, awaitAnswer: true, lease, fence, computed: place.leave })) === "parked") {
            parked = true;
            break;
          }
          mayHaveSaved = false;
          continue;
        }
        // An empty inbox lets the lease go in the same statement.
        const item = await coordination.take(lease, { releaseIfEmpty: true });
        if (!item) {
          released = true;
          break;
        }
        const runtime = this.o.runtimeOf(item.envelope.channel);
        if (!runtime) {
          log.error({ sessionKey, channel: item.envelope.channel }, "a message for a channel this replica does not serve was dropped");
          continue;
        }
        const turnId = `t${randomBytes(4).toString("hex")}`;
        place.take();
        if ((await driver.start(item.envelope, turnId, runtime, item.acceptedAt, { waitParked: false, awaitAnswer: true, lease, fence, computed: place.leave })) === "parked") {
          parked = true;
          break;
        }
        mayHaveSaved = false;
      }
    } finally {
      watch.stop();
      if (!released) await coordination.release(lease).catch(() => {});
    }
    // A message pushed while this replica was letting go found the lease still held: look again.
    return !this.closed && !parked && (this.again.has(sessionKey) || (await coordination.waiting(sessionKey).catch(() => 0)) > 0);
  }

  /**
   * A session taken over from a holder that never let go: the messages it had accepted and not
   * finished are picked up first (see pickUp), so that a message started over goes before the ones
   * sent after it (the inbox gives them out in the order they were accepted). The grace keeps out a
   * message another replica is pushing this moment; the holder's own are older than that by the
   * time its lease lapsed (two thirds of a lease at least, as it renewed every third).
   */
  private async adopt(lease: SessionLease): Promise<void> {
    const grace = Math.min(UNFINISHED_GRACE_MS, Math.floor(this.o.leaseTtlMs / 2));
    const lost = await this.o.coordination.claimUnfinishedOf(lease, grace).catch((err: Error) => {
      this.o.log.warn({ sessionKey: lease.sessionKey, err: err.message }, "the unfinished messages of a session taken over could not be claimed");
      return [];
    });
    for (const { traceId, value } of lost) {
      try {
        await this.pickUp(traceId, value);
      } catch (err) {
        this.o.log.warn({ err: (err as Error).message, traceId }, "unfinished message could not be picked up");
      }
    }
  }

  /**
   * Keeps the lease while the session is drained: renewed with the replica's other leases (renewLeases),
   * stop requests from other replicas reaching it through lookForStops.
   */
  private watch(lease: SessionLease): { stop(): void } {
    this.held.set(lease.sessionKey, lease);
    this.stops ??= setInterval(() => this.lookForStops(), STOP_LOOK_MS).unref();
    // Every third of a lease: one taken just after a renewal is renewed well before it lapses.
    this.renewals ??= setInterval(() => this.renewLeases(), Math.max(200, Math.floor(this.o.leaseTtlMs / 3))).unref();
    return {
      stop: () => {
        if (this.held.get(lease.sessionKey) === lease) this.held.delete(lease.sessionKey);
        if (this.held.size === 0) {
          clearInterval(this.stops);
          this.stops = undefined;
          clearInterval(this.renewals);
          this.renewals = undefined;
        }
      },
    };
  }

  /** Renews the leases of the sessions drained here, one statement for all; a session whose lease was lost has its turn stopped here. */
  private renewLeases(): void {
    const leases = [...this.held.values()];
    if (this.renewing || leases.length === 0) return;
    this.renewing = true;
    const { coordination, lanes, log } = this.o;
    void coordination.renew(leases, this.o.leaseTtlMs).then((kept) => {
      const renewed = new Set(kept.map(({ sessionKey, token }) => `${token}:${sessionKey}`));
      for (const lease of leases) {
        // Let go (or taken again, with a new lease) while the renewal ran: nothing to stop.
        if (renewed.has(`${lease.token}:${lease.sessionKey}`) || this.held.get(lease.sessionKey) !== lease) continue;
        log.warn({ sessionKey: lease.sessionKey }, "session lease lost; the running turn is stopped here");
        lanes.running(lease.sessionKey)?.controller.abort();
      }
    }, () => {}).finally(() => (this.renewing = false));
  }

  /** Passes on the stops other replicas asked for the sessions drained here: one statement for all of them. */
  private lookForStops(): void {
    if (this.lookingForStops) return;
    this.lookingForStops = true;
    void this.o.coordination.takeStopRequests().then((asked) => {
      for (const { sessionKey, token } of asked) {
        if (this.held.get(sessionKey)?.token === token) this.o.lanes.running(sessionKey)?.controller.abort();
      }
    }, () => {}).finally(() => (this.lookingForStops = false));
  }

  private async sweep(): Promise<void> {
    const { coordination, delivery, log } = this.o;
    // As far as there is room here: a replica without room leaves threads nobody holds to one with room.
    this.makeRoom();
    await this.o.approvals.expireOverdue();
    for (const lost of await coordination.claimUnfinished(UNFINISHED_GRACE_MS, this.o.channelNames())) {
      try {
        await this.pickUp(lost.traceId, lost.value);
      } catch (err) {
        log.warn({ err: (err as Error).message, traceId: lost.traceId }, "unfinished message could not be picked up");
      }
    }
  }

  /**
   * A message a dead replica accepted and did not answer, no longer in any inbox or turn record (see
   * inflight.ts): a finished turn's answer is posted; one cut off before its first checkpoint goes
   * back into its session's inbox, once; the rest are reported to their senders.
   */
  private async pickUp(traceId: string, value: string): Promise<void> {
    const { coordination, delivery, observer, store } = this.o;
    const record = readInflight(value);
    if (!record) throw new Error("its record is unreadable");
    if (record.answer !== undefined) {
      if (!record.posted) observer.emit({ event: "reply.resent", traceId, sessionKey: record.sessionKey });
      await postLeftAnswer({ store, delivery }, record, traceId);
      return;
    }
    const env = record.restarted ? undefined : envelopeOf(record, traceId);
    if (env) {
      observer.emit({ event: "turn.restarted", traceId, sessionKey: record.sessionKey });
      // Stamped now: the sweeps' grace then keeps it from being taken for lost before it is in the inbox.
      const { deferred: _d, ...started } = record;
      await store.setValue(`${INFLIGHT}${traceId}`, JSON.stringify({ ...started, restarted: true, at: coordination.now() }));
      await closeLeftProgress({ store, delivery }, env.replyTo, traceId, RESTARTED_NOTICE);
      await coordination.push(env, record.sessionKey, record.at);
      this.kick(record.sessionKey);
      return;
    }
    await closeLeftProgress({ store, delivery }, record.replyTo, traceId);
    await delivery.send(
      record.replyTo,
      `⚠️ I restarted while working on your message ("${record.text}"), so it was not finished. Please send it again (ref ${traceId}).`,
      "notice",
    );
  }
}
