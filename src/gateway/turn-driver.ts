/**
 * Drives one turn through its session lane: compute segments in a global slot, parked waits with
 * no slot held, the resume when the decision comes, and the answer handed to delivery after the
 * turn lets go (so a chat's pacing never holds a slot). Also resumes the turns a previous process
 * left in the store: parked ones wait for their card again, checkpoints continue where they were.
 */
import type { Logger } from "pino";
import { sessionKeyOf, type IngressEnvelope } from "../envelope.ts";
import type { ApprovalDecision } from "../approval/types.ts";
import type { PendingApprovals } from "../approval/pending-approvals.ts";
import type { Delivery } from "../delivery/delivery.ts";
import type { TaskProgress } from "../delivery/task-progress.ts";
import { keepTyping, type TypingIndicator } from "../delivery/typing.ts";
import { LeaseLostError, resumeTurn, runTurn } from "../engine/turn.ts";
import { decodeTurnRecord, type TurnRecord } from "../engine/turn-record.ts";
import type { TurnEvent, TurnResult, TurnState } from "../engine/types.ts";
import type { ChatMessage } from "../model/types.ts";
import type { Observer } from "../observe/observer.ts";
import { StaleLeaseError, type LeaseFence, type Store, type StoredTurn } from "../store/store.ts";
import type { AwayFromSlot, RunningTurn, SessionLanes } from "./lanes.ts";
import { loadContext, type SessionContext } from "../engine/compaction.ts";
import type { ChannelRuntime } from "./gateway.ts";
import { answeredRecord, INFLIGHT, neverStartOver, TASK_PROGRESS } from "./inflight.ts";

/** How long a turn leaving the process waits for its status message to be out, so that it can be kept. */
const KEEP_PROGRESS_WAIT_MS = 2000;
/** How soon after its status message is posted, or a step ends, a running turn's progress is kept (one save for what happened meanwhile). */
const KEEP_PROGRESS_AFTER_MS = 1000;

export interface TurnDriverOptions {
  store: Store;
  delivery: Delivery;
  approvals: PendingApprovals;
  lanes: SessionLanes;
  log: Logger;
  observer: Observer;
  historyLimit: number;
  /** True once the bot is shutting down: computing turns park at their next step boundary. */
  draining: () => boolean;
  /** The clock messages' acceptance times are on (with replicas, the database's). */
  now: () => number;
}

/**
 * Drops leading messages until the history starts where a model may start reading: at a user
 * message, or at an assistant answer that is not a tool call (never at tool results whose call
 * was cut off by the history limit).
 */
export function trimHistory(history: ChatMessage[]): ChatMessage[] {
  const start = history.findIndex((m) => m.role === "user" || (m.role === "assistant" && !m.tool_calls?.length));
  return start < 0 ? [] : history.slice(start);
}

/** How a turn is driven: waiting in memory for its card (one process), or letting go when it parks (replicas). */
export interface DriveOptions {
  /** Wait in this process for the decision on a parked turn (default); false: return `parked`. */
  waitParked?: boolean;
  /**
   * The session's lease (replicas): every checkpoint and the turn's end are written under it
   * (LeaseFence), so the answer of a replica that lost the session is neither stored nor sent.
   */
  lease?: LeaseFence;
  /** The fencing check (replicas): true while this replica still owns the session (after a failure: was it the lease?). */
  fence?: () => Promise<boolean>;
  /**
   * Return only once the answer is posted (replicas: the next turn of the thread may run on another
   * replica, whose answer must not overtake this one). By default the answer leaves through the
   * thread's queue after the turn lets go, which keeps the order within one process.
   */
  awaitAnswer?: boolean;
  /** Called once the turn has computed its end (before its history is written and its answer posted). */
  computed?: () => void;
}

/** How a drive ended: the turn answered (or failed), or it parked and left the process. */
export type DriveEnd = "finished" | "parked";

export class TurnDriver {
  private readonly o: TurnDriverOptions;
  /** Parked turns of this process waiting for their decision, by approval id. */
  private readonly waiters = new Map<string, (decision: ApprovalDecision | undefined) => void>();

  constructor(options: TurnDriverOptions) {
    this.o = options;
    options.approvals.onSettled(({ record, decision }) => {
      const wake = this.waiters.get(record.id);
      if (!wake) return false;
      this.waiters.delete(record.id);
      wake(decision);
      return true;
    });
  }

  /** Runs a new turn for a message (called in its session lane). */
  start(env: IngressEnvelope, turnId: string, runtime: ChannelRuntime, acceptedAt: number, options: DriveOptions = {}): Promise<DriveEnd> {
    const sessionKey = sessionKeyOf(env);
    return this.drive(runtime, env, sessionKey, turnId, acceptedAt, (state) => runTurn(runtime.exec, state), options);
  }

  /**
   * Continues a saved turn (called in its session lane): a parked one with the decision on its card
   * (or, without one and `waitParked`, after waiting for it), a checkpoint at once.
   */
  continueSaved(record: TurnRecord, runtime: ChannelRuntime, decision: ApprovalDecision | undefined, options: DriveOptions & { resumed?: boolean } = {}): Promise<DriveEnd> {
    this.o.observer.emit({ event: "turn.recovered", traceId: record.traceId, sessionKey: record.sessionKey, parked: Boolean(record.batch?.waiting) });
    return this.drive(runtime, record.envelope, record.sessionKey, record.turnId, record.startedAt, (state) => {
      const waiting = record.batch?.waiting;
      if (waiting && !decision) {
        const tool = record.batch!.calls[waiting.index]?.name;
        return Promise.resolve({ status: "parked", reason: "approval", turnId: record.turnId, approvalId: waiting.approvalId, tool });
      }
      return resumeTurn(runtime.exec, state, record, decision);
    }, { ...options, resumed: true });
  }

  /**
   * Queues a turn a previous process left in the store in its session's lane: a parked one waits for
   * its decision again, a checkpoint continues at once. False when its record cannot be read.
   */
  resume(stored: StoredTurn, runtime: ChannelRuntime): boolean {
    let record: TurnRecord;
    try {
      record = decodeTurnRecord(stored);
    } catch (err) {
      this.o.log.error({ turnId: stored.turnId, err: (err as Error).message }, "a saved turn could not be read; its sender is told it was not finished");
      void neverStartOver(this.o.store, stored.traceId).catch(() => {});
      void this.o.store.deleteTurn(stored.turnId);
      // (Its status message, kept by trace id, is closed when the message is reported.)
      void this.o.store.deleteValue(`${TASK_PROGRESS}${stored.turnId}`).catch(() => {});
      return false;
    }
    this.o.lanes.enqueue(record.sessionKey, () => this.continueSaved(record, runtime, undefined).then(() => {}), { force: true });
    return true;
  }

  /** Ends every parked wait of this process (shutdown): the turns stay in the store for the next start. */
  close(): void {
    for (const wake of this.waiters.values()) wake(undefined);
    this.waiters.clear();
  }

  private async drive(
    runtime: ChannelRuntime,
    env: IngressEnvelope,
    sessionKey: string,
    turnId: string,
    acceptedAt: number,
    first: (state: TurnState) => Promise<TurnResult>,
    options: DriveOptions & { resumed?: boolean } = {},
  ): Promise<DriveEnd> {
    const { lanes, store, observer, delivery } = this.o;
    const traceId = env.traceId!;
    const log = this.o.log.child({ traceId, sessionKey });
    const controller = new AbortController();
    const running: RunningTurn = { turnId, traceId, senderId: env.sender.id, controller, startedAt: Date.now(), text: env.text };
    const end = lanes.begin(sessionKey, running);
    const progressKey = `${TASK_PROGRESS}${traceId}`;
    // A turn resumed from the store goes on in the status message it had (when it kept one).
    let shown = options.resumed ? await store.getValue(progressKey).catch(() => undefined) : undefined;
    if (options.resumed && shown === undefined) {
      const legacyKey = `${TASK_PROGRESS}${turnId}`;
      shown = await store.getValue(legacyKey).catch(() => undefined);
      if (shown !== undefined) void store.deleteValue(legacyKey).catch(() => {});
    }
    // The progress is kept in the store a moment after the status message is posted and after each
    // step ends (so that the next start finds it after a crash; a turn done within the moment saves
    // none), and at once when the turn parks. Saves go one after another; one not begun yet takes
    // the latest state for those asked after it; they stop at the end.
    let keepTimer: NodeJS.Timeout | undefined;
    const keepSoon = () => {
      keepTimer ??= setTimeout(() => {
        keepTimer = undefined;
        keepProgress();
      }, KEEP_PROGRESS_AFTER_MS).unref();
    };
    const progress = delivery.taskProgress(env.replyTo, traceId, shown, keepSoon);
    let progressKept: Promise<unknown> | undefined = shown === undefined ? undefined : Promise.resolve();
    let progressForgotten = false;
    let keepWaiting = false;
    const keepProgress = () => {
      if (!progress.snapshot || progressForgotten || keepWaiting) return;
      keepWaiting = true;
      progressKept = (progressKept ?? Promise.resolve()).then(async () => {
        keepWaiting = false;
        const snapshot = await progress.snapshot!();
        if (snapshot && !progressForgotten) await store.setValue(progressKey, snapshot);
      }).catch((err: Error) => log.debug({ err: err.message }, "the progress of a turn could not be kept"));
    };
    const forgetProgress = () => {
      progressForgotten = true;
      clearTimeout(keepTimer);
      if (progressKept) void progressKept.then(() => store.deleteValue(progressKey)).catch(() => {});
    };
    let typing: TypingIndicator | undefined;
    const emit = (event: TurnEvent) => {
      progress.event(event);
      typing?.follow(event);
      if (event.type === "tool.finish") keepSoon();
    };
    const stateWith = (history: ChatMessage[], awayFromSlot: AwayFromSlot, context?: Promise<SessionContext>): TurnState => ({
      turnId, traceId, sessionKey, envelope: env, history, signal: controller.signal, emit, draining: this.o.draining, lease: options.lease,
      endsInStore: true, awayFromSlot, ...(context ? { context } : {}),
    });
    // After a failure: whether this replica lost the session's lease (replicas).
    const leaseLost = async () => options.fence !== undefined && !(await options.fence());
    const computing = (work: (away: AwayFromSlot) => Promise<TurnResult>) =>
      lanes.compute(async (away) => {
        let indicator = (typing = keepTyping(runtime.port, env.replyTo, log));
        let answering = false;
        let over = false;
        // A tool's question to a person: no "typing…" while they think; it comes back when the tool goes on.
        let asking = 0;
        const awayQuietly: AwayFromSlot = (wait) =>
          away(async () => {
            indicator.clear();
            if (asking++ === 0) running.asking = { since: Date.now() };
            try {
              return await wait();
            } finally {
              if (--asking === 0) running.asking = undefined;
              indicator.stop();
              if (!over) indicator = typing = keepTyping(runtime.port, env.replyTo, log);
            }
          });
        try {
          const result = await work(awayQuietly);
          answering = result.status !== "parked";
          return result;
        } finally {
          over = true;
          // No indicator while a person is waited for; after the last step it goes with the answer.
          if (answering) indicator.stop();
          else indicator.clear();
        }
      });
    let answered: Promise<unknown> | undefined;
    const history = async () => trimHistory(await store.loadHistory(sessionKey, this.o.historyLimit));
    // What the turn reads of its session before its first request is read before it takes a slot:
    // a slot is for computing, and with replicas each read is a round trip to the database.
    const beforeSlot = async () => {
      const context = loadContext(store, sessionKey);
      context.catch(() => {}); // awaited by the turn's first request; a turn stopped before it never asks
      const [prior] = await Promise.all([history(), runtime.exec.activation?.restore?.(sessionKey)]);
      return { prior, context };
    };

    try {
      const { prior, context } = await beforeSlot();
      let result = await computing(async (away) => {
        observer.emit({
          event: options.resumed ? "turn.resume" : "turn.start", traceId, sessionKey, turnId,
          historyMessages: prior.length, laneWaitMs: this.o.now() - acceptedAt,
        });
        return first(stateWith(prior, away, context));
      });
      while (result.status === "parked") {
        keepProgress();
        if (result.reason === "shutdown" || !result.approvalId || options.waitParked === false) {
          // The turn leaves this process: what its thread shows is kept before it goes (unless its
          // status message is still held back by the platform's pacing).
          await Promise.race([progressKept, new Promise((r) => setTimeout(r, KEEP_PROGRESS_WAIT_MS).unref())]);
          return "parked";
        }
        running.waitingFor = { approvalId: result.approvalId, tool: result.tool, since: Date.now() };
        void this.linkCard(result.approvalId, progress);
        const decision = await this.decisionFor(result.approvalId, controller.signal);
        running.waitingFor = undefined;
        if (!decision) return "parked"; // shutting down: the parked turn stays in the store
        progress.decided(decision);
        const stored = await store.getTurn(turnId);
        if (!stored) throw new Error(`the parked turn ${turnId} is gone from the store`);
        const record = decodeTurnRecord(stored);
        const again = await beforeSlot();
        result = await computing(async (away) => resumeTurn(runtime.exec, stateWith(again.prior, away, again.context), record, decision));
      }
      options.computed?.();
      // The status message as the turn ends goes into the answered mark: a restart before its last
      // edit is out finishes it (postLeftAnswer).
      const shownAtEnd = progress.snapshotNow?.();
      forgetProgress();
      if (running.discard) {
        void progress.finish("cancelled");
        await store.saveReceipts(result.receipts ?? []);
        await store.deleteTurn(turnId);
        await store.deleteValue(`${INFLIGHT}${traceId}`);
        return "finished";
      }
      const text =
        result.status === "failed" ? `⚠️ Sorry, I couldn't finish this: ${result.error} (ref ${traceId})` : result.text;
      // The history, the end of the turn's record and the answer kept for a restart, in one write:
      // a crash before the answer is out then posts it at the next start, never runs the turn again.
      const mark = answeredRecord(env, sessionKey, acceptedAt, text, result.status, shownAtEnd);
      try {
        await store.finishTurn({
          sessionKey, messages: result.newMessages, turnId, mark: { key: `${INFLIGHT}${traceId}`, value: JSON.stringify(mark) }, receipts: result.receipts,
          checkpointed: result.checkpointed, lease: options.lease,
        });
      } catch (err) {
        if (!(err instanceof StaleLeaseError)) throw err;
        log.warn({ turnId }, "this replica lost the session's lease: its stale result is dropped");
        return "finished";
      }
      // The answer leaves through the thread's queue after the turn lets go of its lane; the status
      // message's summary follows in its next edit slot.
      let statusShown = shownAtEnd === undefined;
      const statusEnded = progress.finish(result.status).then(() => void (statusShown = true));
      const posted = (answered = this.answer(env, text)).then(async (delivered) => {
        observer.emit({ event: delivered ? "reply.delivered" : "reply.failed", traceId, sessionKey, status: result.status });
        const key = `${INFLIGHT}${traceId}`;
        if (statusShown || !delivered) return store.deleteValue(key).catch(() => {});
        // The answer is out, the status message's last edit not yet: the mark says so until it is,
        // so that a restart in between finishes the status message without posting the answer again.
        // Stamped now: other replicas' sweeps leave a posted mark to its replica for a while (see
        // Coordination.claimUnfinished), as a platform may hold the edit back after the lease is gone.
        await store.setValue(key, JSON.stringify({ ...mark, posted: true, at: this.o.now() })).catch(() => {});
        void statusEnded.then(() => store.deleteValue(key).catch(() => {}));
      });
      if (options.awaitAnswer) await posted;
      return "finished";
    } catch (err) {
      if (err instanceof LeaseLostError || (await leaseLost().catch(() => true))) {
        log.warn({ turnId }, "this replica lost the session's lease mid-turn; the new owner continues from the last checkpoint");
        return "parked";
      }
      log.error({ err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, "turn crashed");
      forgetProgress();
      await store.deleteTurn(turnId).catch(() => {});
      void progress.finish("failed");
      await this.answer(env, `⚠️ Something went wrong on my side and this request was not finished (ref ${traceId}).`);
      await store.deleteValue(`${INFLIGHT}${traceId}`).catch(() => {});
      return "finished";
    } finally {
      end();
      void Promise.resolve(answered).finally(() => typing?.clear());
    }
  }

  /**
   * While a turn waits on a card: once the card is posted, hands its link to the task's progress
   * (where the platform has links). The card leaves through its queue a moment after the turn parks.
   */
  private async linkCard(approvalId: string, progress: TaskProgress): Promise<void> {
    try {
      // A paced chat may hold the card for a few slots; past half a minute the line goes without a link.
      for (let waited = 0, wait = 100; waited < 30_000; waited += wait, wait = Math.min(wait * 2, 2000)) {
        const record = await this.o.store.getApproval(approvalId);
        if (!record || record.state !== "pending") return;
        if (record.cardMessageId) {
          const link = await this.o.delivery.permalink(record.target, record.cardMessageId);
          if (link) progress.cardLink(link);
          return;
        }
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    } catch (err) {
      this.o.log.debug({ approvalId, err: (err as Error).message }, "no link to the approval card");
    }
  }

  /**
   * Waits (holding nothing but this promise) for the decision on a parked turn's approval: a click,
   * the timeout, or `/stop` (the turn's signal). Undefined when the bot shuts down first.
   */
  private decisionFor(approvalId: string, signal: AbortSignal): Promise<ApprovalDecision | undefined> {
    return new Promise((resolve) => {
      const onAbort = () => void this.o.approvals.cancel(approvalId);
      const wake = (decision: ApprovalDecision | undefined) => {
        signal.removeEventListener("abort", onAbort);
        resolve(decision);
      };
      this.waiters.set(approvalId, wake);
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      void this.o.approvals.claim(approvalId).then((decision) => {
        if (decision && this.waiters.get(approvalId) === wake) {
          this.waiters.delete(approvalId);
          wake(decision);
        }
      });
    });
  }

  private answer(env: IngressEnvelope, text: string): Promise<boolean> {
    return postReply(this.o, env, text);
  }
}

/** Posts a reply in the message's thread; false (and an error line) when the platform would not take it. */
export async function postReply(deps: { delivery: Delivery; log: Logger }, env: IngressEnvelope, text: string): Promise<boolean> {
  try {
    await deps.delivery.send(env.replyTo, text, "reply", env.traceId);
    return true;
  } catch (err) {
    deps.log.error({ traceId: env.traceId, err: (err as Error).message }, "reply could not be delivered");
    return false;
  }
}
