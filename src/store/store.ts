/**
 * The store interface. The embedded implementation is SQLite (node:sqlite, see sqlite-store.ts);
 * PostgreSQL (postgres-store.ts) implements the same interface when several replicas share a
 * workspace, and open-store.ts picks between them. Every method is async so that a server store
 * fits without changing callers; test/store/contract holds the behaviours both must have.
 */
import type { ReplyTarget } from "../envelope.ts";
import type { ChatMessage } from "../model/types.ts";

export type ApprovalState = "pending" | "approved" | "always" | "denied" | "expired" | "cancelled";

export interface PendingApprovalRecord {
  /** Short, unguessable id carried by the card's buttons. */
  id: string;
  sessionKey: string;
  turnId: string;
  callId: string;
  tool: string;
  /** sha256 of the canonical JSON of the exact arguments shown on the card. */
  argsHash: string;
  argsSummary: string;
  channel: string;
  requesterId: string;
  requesterName?: string;
  /** Sender ids who may decide (the requester and listed admins). */
  approvers: string[];
  target: ReplyTarget;
  /** The card's platform message id, once posted. */
  cardMessageId?: string;
  createdAt: number;
  expiresAt: number;
  state: ApprovalState;
  decidedById?: string;
  decidedByName?: string;
  decidedAt?: number;
  /** False when the tool always asks: an "Always" click then counts as one approval. */
  allowAlways?: boolean;
}

export interface AuditEntry {
  at: number;
  kind: string;
  traceId?: string;
  sessionKey?: string;
  channel?: string;
  tool?: string;
  argsHash?: string;
  actorId?: string;
  actorName?: string;
  /** Where a decision came from: console, backchannel, policy, non-interactive, timeout, hook… */
  source?: string;
  outcome?: string;
  detail?: string;
}

export interface ReceiptRecord {
  id: string;
  at: number;
  sessionKey: string;
  callId: string;
  tool: string;
  /** Canonical JSON of the arguments (sorted keys, including the runtime approval marker). */
  argsCanonical: string;
  /** sha256 hex of the untruncated output. */
  outputHash: string;
  /** HMAC-SHA256 hex. */
  mac: string;
}

export interface SessionInfo {
  key: string;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
}

/** A remembered "always" decision: `tool` runs without asking within `scope`. */
export interface AlwaysRule {
  scope: string;
  tool: string;
  createdAt: number;
}

/**
 * A turn in progress, as the store keeps it: the engine's versioned record (`body`, JSON it owns)
 * and the columns needed to find it. Saved at every step boundary and while the turn is parked.
 */
export interface StoredTurn {
  turnId: string;
  sessionKey: string;
  channel: string;
  traceId: string;
  /** Schema version of `body`. */
  version: number;
  /** The approval the turn is parked on; absent for a checkpoint of a computing turn. */
  waitingApprovalId?: string;
  updatedAt: number;
  body: string;
}

export interface Store {
  /** Appends messages to a session's current history (creating the session). */
  appendHistory(sessionKey: string, messages: ChatMessage[]): Promise<void>;
  /** The last `limit` messages of a session's current history, oldest first (all of it for Number.MAX_SAFE_INTEGER). */
  loadHistory(sessionKey: string, limit: number): Promise<ChatMessage[]>;
  /** Starts a fresh history for the session (`/new`); the old one is kept but no longer loaded. */
  resetSession(sessionKey: string): Promise<void>;
  listSessions(limit?: number): Promise<SessionInfo[]>;
  /**
   * Creates a session with its times and current history, as another store held it (copying a
   * store). Each message is stamped with `updatedAt`. Throws when the session is already stored.
   */
  importSession(session: Omit<SessionInfo, "messageCount">, messages: ChatMessage[]): Promise<void>;

  /** Records an inbound event id; true when it was not seen within its TTL (i.e. handle it). */
  markSeen(channel: string, eventId: string, ttlMs: number, now?: number): Promise<boolean>;

  createApproval(record: PendingApprovalRecord): Promise<void>;
  getApproval(id: string): Promise<PendingApprovalRecord | undefined>;
  setApprovalCardMessage(id: string, messageId: string): Promise<void>;
  /**
   * Atomic compare-and-set from `pending` to a final state. Returns true for exactly one caller;
   * a second click, or a click after expiry, gets false.
   */
  decideApproval(id: string, state: Exclude<ApprovalState, "pending">, by: { id?: string; name?: string }, at: number): Promise<boolean>;
  listApprovals(state?: ApprovalState): Promise<PendingApprovalRecord[]>;

  /** Remembers an "always" decision for a tool within a scope (conversation or sender). */
  rememberAlways(scope: string, tool: string, at: number): Promise<void>;
  hasAlways(scope: string, tool: string): Promise<boolean>;
  /**
   * Forgets every "always" decision of a scope (a session started afresh with `/new`), and of the
   * narrower scopes within it (`<scope>|sender:…`: one person's Always in that thread).
   */
  forgetAlways(scope: string): Promise<void>;
  /** Every remembered "always" decision, by scope and then tool. */
  listAlwaysRules(): Promise<AlwaysRule[]>;

  appendAudit(entry: AuditEntry): Promise<void>;
  listAudit(filter?: { sessionKey?: string; kind?: string; limit?: number }): Promise<AuditEntry[]>;

  saveReceipt(receipt: ReceiptRecord): Promise<void>;
  getReceipt(id: string): Promise<ReceiptRecord | undefined>;
  /** Every receipt, oldest first. */
  listReceipts(): Promise<ReceiptRecord[]>;

  /** Saves (or replaces) a turn's record. */
  saveTurn(turn: StoredTurn): Promise<void>;
  getTurn(turnId: string): Promise<StoredTurn | undefined>;
  /** Every turn record, oldest first (at start-up: the turns to resume). */
  listTurns(): Promise<StoredTurn[]>;
  /** The turn records of one session, oldest first (a parked turn reserves its session). */
  listTurnsOf(sessionKey: string): Promise<StoredTurn[]>;
  deleteTurn(turnId: string): Promise<void>;

  /** Small named values (Telegram update offset, …). */
  getValue(key: string): Promise<string | undefined>;
  setValue(key: string, value: string): Promise<void>;
  /** Every value whose key starts with `prefix`, by key. */
  listValues(prefix: string): Promise<Array<{ key: string; value: string }>>;
  deleteValue(key: string): Promise<void>;

  close(): Promise<void>;
}
