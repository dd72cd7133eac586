/**
 * What several replicas sharing one database agree through: a lease per session (one replica
 * computes a thread at a time; a fencing token that changes with every owner), a durable inbox
 * per session (messages wait in order, whichever replica took them), stop requests for a turn
 * computing elsewhere, and named leases for what only one replica may do (hold the Discord
 * gateway connection). Implemented on PostgreSQL (postgres-coordination.ts); a single process on
 * SQLite needs none of it.
 */
import type { IngressEnvelope } from "../envelope.ts";

/**
 * How long a message whose answer is out stays with the replica that posted it before any sweep may
 * finish its status message: the platform may hold that last edit back (pacing, a 429) for a while.
 */
export const POSTED_GRACE_MS = 60_000;

/** A replica's hold on a session. `token` grows with every new owner: a write carrying an older one is stale. */
export interface SessionLease {
  sessionKey: string;
  owner: string;
  token: number;
  /** The lease was taken over from a holder whose lease lapsed without letting go (it died, or lost touch). */
  takenOver?: boolean;
}

/** A message waiting in its session's inbox. */
export interface InboxItem {
  id: number;
  sessionKey: string;
  envelope: IngressEnvelope;
  acceptedAt: number;
}

/** What `Coordination.admit` did with a message. */
export type Admission = { queued: false; waiting: number } | { queued: true; id: number; ahead: number; working: boolean };

/** A message that was accepted and never answered, and no replica works on any more. */
export interface Unfinished {
  traceId: string;
  value: string;
}

export interface Coordination {
  /** This replica's name in leases (host, pid and a random part). */
  readonly replicaId: string;
  /**
   * The database's clock as this replica reads it (epoch ms): the local clock corrected by its
   * measured offset. Times that other replicas compare (when a message was accepted, which orders
   * the inbox and starts the grace before a message counts as lost) are taken from it, so that a
   * replica whose clock is off neither jumps the queue nor has its fresh messages taken for lost.
   */
  now(): number;
  /** Adds a message to its session's inbox; `ahead`: how many wait before it. `acceptedAt` is on the database's clock (`now`). */
  push(envelope: IngressEnvelope, sessionKey: string, acceptedAt: number): Promise<{ id: number; ahead: number }>;
  /**
   * Accepts a message in one round trip: unless `maxQueued` messages already wait in its session's
   * inbox, writes its in-flight mark (`mark`, a store value) and adds it to the inbox, together.
   * Tells how many waited before it, and whether the session was being worked on as it came: a
   * live lease, or a turn saved in the store (both as they were before the message was added).
   */
  admit(envelope: IngressEnvelope, sessionKey: string, acceptedAt: number, options: { maxQueued: number; mark: { key: string; value: string } }): Promise<Admission>;
  /** Messages waiting in a session's inbox. */
  waiting(sessionKey: string): Promise<number>;
  /**
   * Takes the oldest message of the session's inbox (by the time it was accepted), if the lease is
   * still ours. With `releaseIfEmpty`, an inbox found empty lets the lease go in the same statement
   * (as release does); a message pushed meanwhile is then for `waiting` to find.
   */
  take(lease: SessionLease, options?: { releaseIfEmpty?: boolean }): Promise<InboxItem | undefined>;

  /** Takes a session's lease with a new token, unless another replica holds a live one. */
  acquire(sessionKey: string, ttlMs: number): Promise<SessionLease | undefined>;
  /**
   * Extends these leases of this replica, all in one statement; gives back those it extended. One
   * left out was lost (it expired, or another replica took the session over).
   */
  renew(leases: readonly SessionLease[], ttlMs: number): Promise<Array<Pick<SessionLease, "sessionKey" | "token">>>;
  /** True while the lease is live and still ours (the fencing check before a write or a send). */
  holds(lease: SessionLease): Promise<boolean>;
  release(lease: SessionLease): Promise<void>;

  /** Asks the replica computing a session's turn to stop it; false when none holds its lease. */
  requestStop(sessionKey: string): Promise<boolean>;
  /** The leases of this replica a stop was asked for (the requests are cleared): one look for all its drains. */
  takeStopRequests(): Promise<Array<Pick<SessionLease, "sessionKey" | "token">>>;

  /**
   * Sessions with work and no live lease: messages in their inbox, a turn saved at a checkpoint, or a
   * parked turn whose approval was decided — left by a replica that died, or never picked up.
   * Sessions with a saved turn first, then the others by their oldest waiting message.
   */
  orphaned(): Promise<string[]>;
  /**
   * Claims (once, across replicas) messages accepted but neither waiting, saved nor computing
   * anywhere, older than `graceMs`, on the `channels` this replica serves: their replica died before
   * their first checkpoint. Not those of a session with messages in its inbox: whoever drains it
   * claims them first (claimUnfinishedOf), so that they keep their place before the later ones.
   * A message whose answer is out (`posted`, stamped when it was posted) is claimed only after
   * POSTED_GRACE_MS: its replica is finishing the status message, which the platform may hold back.
   */
  claimUnfinished(graceMs: number, channels: string[]): Promise<Unfinished[]>;
  /**
   * The same for one session whose lease this replica holds (`lease`, still live), oldest first:
   * what the holder it was taken over from had accepted and not finished.
   */
  claimUnfinishedOf(lease: SessionLease, graceMs: number): Promise<Unfinished[]>;

  /** Takes or renews a named lease (e.g. `discord-gateway`); true while this replica holds it. */
  holdNamed(name: string, ttlMs: number): Promise<boolean>;
  releaseNamed(name: string): Promise<void>;

  close(): Promise<void>;
}
