/**
 * Lanes: one turn at a time per session key, and a global cap on the model and tool work that
 * runs at once. The two are apart: a turn holds its session's lane from start to end (so a
 * thread's next message waits, also while the turn is parked for a person), but holds one of the
 * `maxConcurrentTurns` slots only while it computes. Also the record of what runs or waits (for
 * /stop and /status). Approval clicks and commands never enter a session lane, so they never
 * wait behind the turn they control.
 */
import PQueue from "p-queue";

export interface RunningTurn {
  turnId: string;
  senderId: string;
  traceId: string;
  controller: AbortController;
  startedAt: number;
  text: string;
  /** Set while the turn is parked: the approval it waits for. */
  waitingFor?: { approvalId: string; tool?: string; since: number };
  /** Set while a running tool's question waits for a person (the turn holds no slot meanwhile). */
  asking?: { since: number };
  /** `/new` while parked: the turn ends without adding to the (reset) history or answering. */
  discard?: boolean;
}

const SETTLED_CHECK_MS = 50;

/** Waits for a person without holding a slot (see SessionLanes.compute). */
export type AwayFromSlot = <W>(wait: () => Promise<W>) => Promise<W>;

export type EnqueueResult = { accepted: true; ahead: number } | { accepted: false; waiting: number };

export class SessionLanes {
  private readonly slots: PQueue;
  private readonly lanes = new Map<string, PQueue>();
  private readonly runningTurns = new Map<string, RunningTurn>();
  private readonly maxQueuedPerSession: number;

  constructor(options: { maxConcurrentTurns: number; maxQueuedPerSession: number }) {
    this.slots = new PQueue({ concurrency: options.maxConcurrentTurns });
    this.maxQueuedPerSession = options.maxQueuedPerSession;
  }

  /** Queues a turn in its session's lane; refused when the lane already holds its cap. */
  enqueue(sessionKey: string, job: () => Promise<void>, options: { force?: boolean } = {}): EnqueueResult {
    let lane = this.lanes.get(sessionKey);
    if (!lane) {
      lane = new PQueue({ concurrency: 1 });
      this.lanes.set(sessionKey, lane);
    }
    const ahead = lane.size + lane.pending;
    if (!options.force && lane.size >= this.maxQueuedPerSession && lane.pending > 0) return { accepted: false, waiting: lane.size };
    const l = lane;
    void l.add(job).finally(() => {
      if (l.size === 0 && l.pending === 0) this.lanes.delete(sessionKey);
    });
    return { accepted: true, ahead };
  }

  /**
   * Runs model or tool work in one of the global slots (waiting for a free one). `away` lets the
   * work give its slot up while it waits for a person (a running tool's question) and take one
   * again after: only computing holds a slot. Calls of one batch running in parallel share the
   * turn's slot; it is given up while any of them waits, and taken again once none does.
   */
  async compute<T>(work: (away: AwayFromSlot) => Promise<T>): Promise<T> {
    let held: (() => void) | undefined = await this.acquire();
    let waiting = 0;
    let regaining: Promise<void> | undefined;
    // A wait that outlives the work (a call left behind by a failed batch) takes no slot after it.
    let finished = false;
    const away: AwayFromSlot = async (wait) => {
      if (regaining) await regaining;
      if (waiting++ === 0) {
        held?.();
        held = undefined;
      }
      try {
        return await wait();
      } finally {
        if (--waiting === 0 && !finished) {
          regaining = this.acquire().then((release) => {
            if (finished) release();
            else held = release;
            regaining = undefined;
          });
        }
        if (regaining) await regaining;
      }
    };
    try {
      return await work(away);
    } finally {
      finished = true;
      if (regaining) await regaining;
      held?.();
      held = undefined;
    }
  }

  /** Takes a slot (waiting for a free one); resolves with the function that gives it back. */
  private acquire(): Promise<() => void> {
    return new Promise((taken) => {
      void this.slots.add(
        () =>
          new Promise<void>((done) => {
            let given = false;
            taken(() => {
              if (given) return;
              given = true;
              done();
            });
          }),
      );
    });
  }

  /** Marks a turn running (or parked) in a session; returns the function that clears it. */
  begin(sessionKey: string, turn: RunningTurn): () => void {
    this.runningTurns.set(sessionKey, turn);
    return () => {
      if (this.runningTurns.get(sessionKey) === turn) this.runningTurns.delete(sessionKey);
    };
  }

  running(sessionKey: string): RunningTurn | undefined {
    return this.runningTurns.get(sessionKey);
  }

  /** Running turns in the threads of a conversation (sessions keyed `<conversation key>:<thread>`). */
  runningUnder(conversationKey: string): Array<[string, RunningTurn]> {
    return [...this.runningTurns].filter(([key]) => key.startsWith(`${conversationKey}:`));
  }

  /** A turn of the session runs, is parked, or waits for the lane or for a free slot. */
  busy(sessionKey: string): boolean {
    const lane = this.lanes.get(sessionKey);
    return this.runningTurns.has(sessionKey) || (lane !== undefined && lane.size + lane.pending > 0);
  }

  /** Messages waiting behind the running turn of a session. */
  queued(sessionKey: string): number {
    return this.lanes.get(sessionKey)?.size ?? 0;
  }

  /** How much model and tool work runs at once (`maxConcurrentTurns`). */
  get concurrency(): number {
    return this.slots.concurrency;
  }

  /** Turns that compute now or wait for a slot (parked turns, and turns whose tool waits for an answer, are not counted). */
  get runningCount(): number {
    let n = 0;
    for (const t of this.runningTurns.values()) if (!t.waitingFor && !t.asking) n++;
    return n;
  }

  /** Turns whose running tool waits for a person's answer to its question. */
  get askingCount(): number {
    let n = 0;
    for (const t of this.runningTurns.values()) if (t.asking) n++;
    return n;
  }

  /** Turns parked for a person. */
  get parkedCount(): number {
    let n = 0;
    for (const t of this.runningTurns.values()) if (t.waitingFor) n++;
    return n;
  }

  /** Sessions with a lane in memory (a lane is dropped when its last job ends). */
  get laneCount(): number {
    return this.lanes.size;
  }

  /** Cancels every computing turn (shutdown, once the grace period is over). */
  abortAll(): void {
    for (const t of this.runningTurns.values()) if (!t.waitingFor) t.controller.abort();
  }

  /**
   * Resolves when nothing is left to compute: every turn has ended or is parked for a person
   * (with the messages queued behind it). Checked every SETTLED_CHECK_MS.
   */
  async settled(): Promise<void> {
    const parkedOrIdle = ([key, lane]: [string, PQueue]) => lane.size + lane.pending === 0 || this.runningTurns.get(key)?.waitingFor !== undefined;
    while (this.runningCount + this.askingCount > 0 || this.slots.size + this.slots.pending > 0 || ![...this.lanes].every(parkedOrIdle)) {
      await new Promise((r) => setTimeout(r, SETTLED_CHECK_MS));
    }
  }

  /** Resolves when no turn runs or waits. */
  async idle(): Promise<void> {
    await Promise.all([...this.lanes.values()].map((l) => l.onIdle()));
    await this.slots.onIdle();
  }
}
