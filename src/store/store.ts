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
  /** For a denial: the reason the person gave ("Deny with reason…"). */
  decisionReason?: string;
  /** False when the tool always asks: an "Always" click then counts as one approval. */
  allowAlways?: boolean;
  /** The approver rule the request was asked under, when one matched (groups, quorum, routing). */
  approverRule?: ApproverRuleRecord;
}

/** What a pending approval keeps of the approver rule it was asked under. */
export interface ApproverRuleRecord {
  /** The rule's name or `approval.rules[<index>]`. */
  name: string;
  groups: string[];
  roles: string[];
  chatAdmins: boolean;
  /** Different people who must approve. */
  quorum: number;
  /** Where the conversation asked, when the card was posted elsewhere (`target` is then the approvers' channel). */
  askedIn?: ReplyTarget;
  /** How the thread names the approvers' channel. */
  routeLabel?: string;
  /** A link to the message that asked, shown on the routed card. */
  askedInLink?: string;
}

/** One person's approval towards a quorum. */
export interface ApprovalVote {
  voterId: string;
  voterName?: string;
  at: number;
}

/**
 * One entry of the audit log, which is also the decision log (`gatehouse approvals list`): every
 * approval request and decision, policy refusal, hook block and policy change at start.
 */
export interface AuditEntry {
  at: number;
  /** approval.requested, approval.decided, approval.click_refused, policy.refused, hook.blocked, policy.changed… */
  kind: string;
  traceId?: string;
  sessionKey?: string;
  channel?: string;
  tool?: string;
  argsHash?: string;
  /** The secret-free summary of the arguments, as an approval card shows it. */
  argsSummary?: string;
  /** Who did what the entry records: the requester of a request, the person who decided or clicked. */
  actorId?: string;
  actorName?: string;
  /** Whose message the call came from. */
  requesterId?: string;
  requesterName?: string;
  /** The person who decided (approval.decided by a person). */
  decidedById?: string;
  decidedByName?: string;
  /**
   * Where a decision came from: console or backchannel (a person), policy, always (a remembered
   * "Always"), non-interactive, timeout, cancelled, hook:<name>…
   */
  source?: string;
  outcome?: string;
  /** Why it was decided so: the reason a person gave, why nobody could be asked, the policy rule that approved. */
  reason?: string;
  /** The rule that required approval, the rule that refused, what a policy change widened… */
  detail?: string;
}

/** An audit entry as the log holds it: its row and, for entries written since the chain began, its link. */
export interface LoggedAuditEntry extends AuditEntry {
  /** The entry's position in the table: increasing in the order entries were appended. */
  row: number;
  /** 1, 2, 3… along the chain; absent on entries from before the chain began. */
  seq?: number;
  /** The hash of the entry before (64 zeros for the first). */
  prevHash?: string;
  /** sha256 over prevHash and this entry's fields (see audit-chain.ts). */
  hash?: string;
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
  /** Short id that names the decision (a Revoke button, `gatehouse approvals always --revoke`). */
  id: string;
  scope: string;
  tool: string;
  createdAt: number;
  /** When it stops applying (`approval.alwaysTtl`); absent: it does not expire. */
  expiresAt?: number;
  /** The display name of the person the scope's sender part names, as it was when given. */
  personName?: string;
}

/** What `rememberAlways` may be told besides the scope, tool and time. */
export interface RememberAlwaysOptions {
  /** The decision's id (a copied store keeps it); a new one is made when absent. */
  id?: string;
  expiresAt?: number;
  personName?: string;
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

/**
 * The session lease a write is made under (replicas): the write happens only while that lease is
 * live, checked in the write's own transaction and held there until it commits, so a replica that
 * lost the session can no longer write for it, however late its write arrives. A store with no
 * replicas (SQLite) has no leases and writes.
 */
export interface LeaseFence {
  sessionKey: string;
  token: number;
}

/** A write refused because the lease it was made under is no longer live (see LeaseFence). */
export class StaleLeaseError extends Error {
  constructor(lease: LeaseFence) {
    super(`the lease ${lease.token} on ${lease.sessionKey} is no longer live: the write was refused`);
    this.name = "StaleLeaseError";
  }
}

/** What Store.finishTurn writes. */
export interface TurnEnd {
  sessionKey: string;
  messages: ChatMessage[];
  turnId: string;
  mark?: { key: string; value: string };
  /** Receipts of the turn's calls not saved yet (see saveTurn). */
  receipts?: ReceiptRecord[];
  /** False when the turn saved no record: there is none to delete (a hint; a store may delete anyway). */
  checkpointed?: boolean;
  /** The lease the turn ran under (replicas): nothing is written without it (StaleLeaseError). */
  lease?: LeaseFence;
}

/** How long a value given to `Store.setValueSoon` may wait before it is written. */
export const VALUE_SOON_MS = 1000;

export interface Store {
  /** Appends messages to a session's current history (creating the session). */
  appendHistory(sessionKey: string, messages: ChatMessage[]): Promise<void>;
  /**
   * A turn's end, in one transaction: its messages appended to the session's history, its record
   * (`turnId`) deleted, `mark` set (the message's in-flight record, noting its answer), and the
   * receipts of its calls not saved yet (as saveReceipts does) saved. A crash
   * leaves the turn either still to finish or finished, never half of each. Under `end.lease`, all
   * or nothing of it is written, and a lease no longer live throws StaleLeaseError.
   */
  finishTurn(end: TurnEnd): Promise<void>;
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
   * a second click, or a click after expiry, gets false. `reason` is kept with the decision (a denial's reason).
   */
  decideApproval(id: string, state: Exclude<ApprovalState, "pending">, by: { id?: string; name?: string }, at: number, reason?: string): Promise<boolean>;
  listApprovals(state?: ApprovalState): Promise<PendingApprovalRecord[]>;
  /**
   * Records one person's approval of a pending request towards its quorum, atomically: `added` is
   * false when that person already approved it (or it is no longer pending). `votes` are all of them, oldest first.
   */
  addApprovalVote(approvalId: string, vote: ApprovalVote): Promise<{ added: boolean; votes: ApprovalVote[] }>;

  /**
   * Remembers an "always" decision for a tool within a scope (conversation or sender). A decision
   * already remembered there is kept as it was, unless it has expired: then this one replaces it.
   */
  rememberAlways(scope: string, tool: string, at: number, options?: RememberAlwaysOptions): Promise<void>;
  /** Whether an "always" decision for the tool applies in the scope at `now` (expired ones do not). */
  hasAlways(scope: string, tool: string, now?: number): Promise<boolean>;
  /**
   * Forgets every "always" decision of a scope (a session started afresh with `/new`), and of the
   * narrower scopes within it (`<scope>|sender:…`: one person's Always in that thread).
   */
  forgetAlways(scope: string): Promise<void>;
  /**
   * Every remembered "always" decision (expired ones too), by scope and then tool; with `under`,
   * only those of that scope and of the narrower scopes within it (`<under>|…`).
   */
  listAlwaysRules(filter?: { under?: string }): Promise<AlwaysRule[]>;
  getAlwaysRule(id: string): Promise<AlwaysRule | undefined>;
  /** Forgets one "always" decision by id, atomically: the decision removed, or undefined for every caller but the first. */
  revokeAlways(id: string): Promise<AlwaysRule | undefined>;

  /**
   * Appends an entry to the audit log, chained to the one before it (audit-chain.ts); appends are
   * serialized across processes and replicas so that the chain stays one line. The log has no
   * update or delete: it is append-only.
   */
  appendAudit(entry: AuditEntry): Promise<void>;
  listAudit(filter?: { sessionKey?: string; kind?: string; limit?: number }): Promise<AuditEntry[]>;
  /** Up to `limit` entries after row `afterRow` (from the start without it), oldest first, with their rows and links. */
  readAuditLog(page?: { afterRow?: number; limit?: number }): Promise<LoggedAuditEntry[]>;

  /**
   * Saves receipts, in one transaction. Saving a receipt again is harmless, also for another call
   * (one signed for the same tool, arguments, output and time); a different receipt under a used
   * id throws and saves none of them.
   */
  saveReceipts(receipts: ReceiptRecord[]): Promise<void>;
  getReceipt(id: string): Promise<ReceiptRecord | undefined>;
  /** Every receipt, oldest first. */
  listReceipts(): Promise<ReceiptRecord[]>;

  /**
   * Saves (or replaces) a turn's record, with `receipts` (as saveReceipts does) in the same
   * transaction: the receipts of the calls whose results the record is the first to hold. Under
   * `lease`, neither is written when the lease is no longer live (StaleLeaseError).
   */
  saveTurn(turn: StoredTurn, receipts?: ReceiptRecord[], lease?: LeaseFence): Promise<void>;
  getTurn(turnId: string): Promise<StoredTurn | undefined>;
  /** Every turn record, oldest first (at start-up: the turns to resume). */
  listTurns(): Promise<StoredTurn[]>;
  /** The turn records of one session, oldest first (a parked turn reserves its session). */
  listTurnsOf(sessionKey: string): Promise<StoredTurn[]>;
  deleteTurn(turnId: string): Promise<void>;

  /** Small named values (Telegram update offset, …). */
  getValue(key: string): Promise<string | undefined>;
  /** Several named values in one read: those that exist, by key. */
  getValues(keys: readonly string[]): Promise<Map<string, string>>;
  setValue(key: string, value: string): Promise<void>;
  /**
   * `setValue` for a value that may reach the disk a moment later (the context gauge /status shows):
   * such values are written together, in one transaction, within VALUE_SOON_MS, and at `close()`.
   * This process reads it back at once; a crash can lose the last ones. A later `setValue` or
   * `deleteValue` of the key wins over one still waiting.
   */
  setValueSoon(key: string, value: string): Promise<void>;
  /** Every value whose key starts with `prefix`, by key. */
  listValues(prefix: string): Promise<Array<{ key: string; value: string }>>;
  deleteValue(key: string): Promise<void>;

  close(): Promise<void>;
}
