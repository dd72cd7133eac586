/**
 * Lanes: one turn at a time per session key, a global cap on concurrent turns, and the record
 * of what is running (for /stop and /status). Approval clicks and commands never enter a session
 * lane, so they never wait behind the turn they control.
 */
import PQueue from "p-queue";

export interface RunningTurn {
  turnId: string;
  senderId: string;
  traceId: string;
  controller: AbortController;
  startedAt: number;
  text: string;
}

export type EnqueueResult = { accepted: true; ahead: number } | { accepted: false; waiting: number };

export class SessionLanes {
  private readonly global: PQueue;
  private readonly lanes = new Map<string, PQueue>();
  private readonly runningTurns = new Map<string, RunningTurn>();
  private readonly maxQueuedPerSession: number;

  constructor(options: { maxConcurrentTurns: number; maxQueuedPerSession: number }) {
    this.global = new PQueue({ concurrency: options.maxConcurrentTurns });
    this.maxQueuedPerSession = options.maxQueuedPerSession;
  }

  /** Queues a turn in its session's lane; refused when the lane already holds its cap. */
  enqueue(sessionKey: string, job: () => Promise<void>): EnqueueResult {
    let lane = this.lanes.get(sessionKey);
    if (!lane) {
      lane = new PQueue({ concurrency: 1 });
      this.lanes.set(sessionKey, lane);
    }
    const ahead = lane.size + lane.pending;
    if (lane.size >= this.maxQueuedPerSession && lane.pending > 0) return { accepted: false, waiting: lane.size };
    const l = lane;
    void l
      .add(() => this.global.add(job))
      .finally(() => {
        if (l.size === 0 && l.pending === 0) this.lanes.delete(sessionKey);
      });
    return { accepted: true, ahead };
  }

  /** Marks a turn running in a session; returns the function that clears it. */
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

  /** A turn of the session runs, or waits for the lane or for a free slot among all turns. */
  busy(sessionKey: string): boolean {
    const lane = this.lanes.get(sessionKey);
    return this.runningTurns.has(sessionKey) || (lane !== undefined && lane.size + lane.pending > 0);
  }

  /** Messages waiting behind the running turn of a session. */
  queued(sessionKey: string): number {
    return this.lanes.get(sessionKey)?.size ?? 0;
  }

  get runningCount(): number {
    return this.runningTurns.size;
  }

  /** Cancels every running turn (shutdown). */
  abortAll(): void {
    for (const t of this.runningTurns.values()) t.controller.abort();
  }

  /** Resolves when no turn runs or waits. */
  async idle(): Promise<void> {
    await Promise.all([...this.lanes.values()].map((l) => l.onIdle()));
    await this.global.onIdle();
  }
}
