/**
 * The mapping between the store's records and their rows, shared by the SQLite and PostgreSQL
 * stores. Column types are guaranteed by the STRICT tables in migrations.ts and the typed columns
 * of postgres-migrations.ts (whose BIGINTs the PostgreSQL store reads as numbers); the JSON
 * columns (approvers, target) are checked with zod when read, since a damaged value there would
 * otherwise surface far from the store.
 */
import { z } from "zod";
import type { SQLInputValue } from "node:sqlite";
import { ReplyTargetSchema } from "../envelope.ts";
import type { ChainLink } from "./audit-chain.ts";
import type { ApprovalState, ApprovalVote, AuditEntry, LoggedAuditEntry, PendingApprovalRecord, ReceiptRecord, StoredTurn } from "./store.ts";

/** A row of the `approvals` table. */
export interface ApprovalRow {
  id: string;
  session_key: string;
  turn_id: string;
  call_id: string;
  tool: string;
  args_hash: string;
  args_summary: string;
  channel: string;
  requester_id: string;
  requester_name: string | null;
  approvers: string;
  target: string;
  card_message_id: string | null;
  created_at: number;
  expires_at: number;
  state: ApprovalState;
  decided_by_id: string | null;
  decided_by_name: string | null;
  decided_at: number | null;
  /** 0/1 in SQLite, a BOOLEAN in PostgreSQL. */
  allow_always: number | boolean;
  /** JSON of the ApproverRuleRecord, or null. */
  approver_rule: string | null;
  decision_reason: string | null;
}

/** A row of the `audit` table. */
export interface AuditRow {
  id: number;
  at: number;
  kind: string;
  trace_id: string | null;
  session_key: string | null;
  channel: string | null;
  tool: string | null;
  args_hash: string | null;
  actor_id: string | null;
  actor_name: string | null;
  source: string | null;
  outcome: string | null;
  detail: string | null;
  args_summary: string | null;
  requester_id: string | null;
  requester_name: string | null;
  decided_by_id: string | null;
  decided_by_name: string | null;
  reason: string | null;
  /** Null on entries from before the chain began. */
  seq: number | null;
  prev_hash: string | null;
  hash: string | null;
}

/** A row of the `receipts` table. */
export interface ReceiptRow {
  id: string;
  at: number;
  session_key: string;
  call_id: string;
  tool: string;
  args_canonical: string;
  output_hash: string;
  mac: string;
}

const Approvers = z.array(z.string());
const ApproverRuleColumn = z.object({
  name: z.string(),
  groups: z.array(z.string()),
  roles: z.array(z.string()),
  chatAdmins: z.boolean(),
  quorum: z.number().int().min(1),
  askedIn: ReplyTargetSchema.optional(),
  routeLabel: z.string().optional(),
  askedInLink: z.string().optional(),
});

/** A row of the `approval_votes` table. */
export interface ApprovalVoteRow {
  approval_id: string;
  voter_id: string;
  voter_name: string | null;
  at: number;
}

/** Reads a vote row back. */
export function voteFromRow(row: ApprovalVoteRow): ApprovalVote {
  return row.voter_name === null ? { voterId: row.voter_id, at: row.at } : { voterId: row.voter_id, voterName: row.voter_name, at: row.at };
}

/**
 * Named parameters for inserting an approval (node:sqlite binds `$name` from these keys; the
 * PostgreSQL store binds them in the order of its column list). PostgreSQL reads 0/1 as a boolean.
 */
export function approvalParams(r: PendingApprovalRecord): Record<string, SQLInputValue> {
  return {
    id: r.id,
    session_key: r.sessionKey,
    turn_id: r.turnId,
    call_id: r.callId,
    tool: r.tool,
    args_hash: r.argsHash,
    args_summary: r.argsSummary,
    channel: r.channel,
    requester_id: r.requesterId,
    requester_name: r.requesterName ?? null,
    approvers: JSON.stringify(r.approvers),
    target: JSON.stringify(r.target),
    card_message_id: r.cardMessageId ?? null,
    created_at: r.createdAt,
    expires_at: r.expiresAt,
    state: r.state,
    decided_by_id: r.decidedById ?? null,
    decided_by_name: r.decidedByName ?? null,
    decided_at: r.decidedAt ?? null,
    allow_always: r.allowAlways === false ? 0 : 1,
    approver_rule: r.approverRule ? JSON.stringify(r.approverRule) : null,
    decision_reason: r.decisionReason ?? null,
  };
}

/** Reads an approval row back into its record; absent optional fields are left out. */
export function approvalFromRow(row: ApprovalRow): PendingApprovalRecord {
  const record: PendingApprovalRecord = {
    id: row.id,
    sessionKey: row.session_key,
    turnId: row.turn_id,
    callId: row.call_id,
    tool: row.tool,
    argsHash: row.args_hash,
    argsSummary: row.args_summary,
    channel: row.channel,
    requesterId: row.requester_id,
    approvers: Approvers.parse(JSON.parse(row.approvers)),
    target: ReplyTargetSchema.parse(JSON.parse(row.target)),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    state: row.state,
  };
  if (row.requester_name !== null) record.requesterName = row.requester_name;
  if (row.card_message_id !== null) record.cardMessageId = row.card_message_id;
  if (row.decided_by_id !== null) record.decidedById = row.decided_by_id;
  if (row.decided_by_name !== null) record.decidedByName = row.decided_by_name;
  if (row.decided_at !== null) record.decidedAt = row.decided_at;
  if (row.allow_always === 0 || row.allow_always === false) record.allowAlways = false;
  if (row.approver_rule) record.approverRule = ApproverRuleColumn.parse(JSON.parse(row.approver_rule));
  if (row.decision_reason !== null) record.decisionReason = row.decision_reason;
  return record;
}

/** Named parameters for inserting an audit entry with its link in the chain (see audit-chain.ts). */
export function auditParams(e: AuditEntry, link: ChainLink): Record<string, SQLInputValue> {
  const params: Record<string, SQLInputValue> = { at: e.at, kind: e.kind };
  for (const [field, column] of AUDIT_FIELDS) params[column] = e[field] ?? null;
  return { ...params, seq: link.seq, prev_hash: link.prevHash, hash: link.hash };
}

/** The optional fields of an entry and their columns. */
const AUDIT_FIELDS = [
  ["traceId", "trace_id"],
  ["sessionKey", "session_key"],
  ["channel", "channel"],
  ["tool", "tool"],
  ["argsHash", "args_hash"],
  ["actorId", "actor_id"],
  ["actorName", "actor_name"],
  ["source", "source"],
  ["outcome", "outcome"],
  ["detail", "detail"],
  ["argsSummary", "args_summary"],
  ["requesterId", "requester_id"],
  ["requesterName", "requester_name"],
  ["decidedById", "decided_by_id"],
  ["decidedByName", "decided_by_name"],
  ["reason", "reason"],
] as const;

/** Reads an audit row back into its entry; absent optional fields are left out. */
export function auditFromRow(row: AuditRow): AuditEntry {
  const entry: AuditEntry = { at: row.at, kind: row.kind };
  for (const [field, column] of AUDIT_FIELDS) {
    const value = row[column];
    if (value !== null) entry[field] = value;
  }
  return entry;
}

/** Reads an audit row back with its row number and, when it has one, its link in the chain. */
export function loggedAuditFromRow(row: AuditRow): LoggedAuditEntry {
  const entry: LoggedAuditEntry = { ...auditFromRow(row), row: row.id };
  if (row.seq !== null) entry.seq = row.seq;
  if (row.prev_hash !== null) entry.prevHash = row.prev_hash;
  if (row.hash !== null) entry.hash = row.hash;
  return entry;
}

/** Named parameters for inserting a receipt. */
export function receiptParams(r: ReceiptRecord): Record<string, SQLInputValue> {
  return {
    id: r.id,
    at: r.at,
    session_key: r.sessionKey,
    call_id: r.callId,
    tool: r.tool,
    args_canonical: r.argsCanonical,
    output_hash: r.outputHash,
    mac: r.mac,
  };
}

/** Reads a receipt row back into its record. */
export function receiptFromRow(row: ReceiptRow): ReceiptRecord {
  return {
    id: row.id,
    at: row.at,
    sessionKey: row.session_key,
    callId: row.call_id,
    tool: row.tool,
    argsCanonical: row.args_canonical,
    outputHash: row.output_hash,
    mac: row.mac,
  };
}

/**
 * Whether a stored receipt vouches for the same thing as one about to be saved under its id: the
 * same tool, arguments, output and time, signed alike. Two calls that ran identically in the same
 * millisecond (on two replicas) share one receipt; which call the row names is then the first's.
 */
export function sameSignedReceipt(stored: ReceiptRecord, saving: ReceiptRecord): boolean {
  return stored.at === saving.at && stored.tool === saving.tool && stored.argsCanonical === saving.argsCanonical &&
    stored.outputHash === saving.outputHash && stored.mac === saving.mac;
}

export interface TurnRow {
  turn_id: string;
  session_key: string;
  channel: string;
  trace_id: string;
  version: number;
  waiting_approval_id: string | null;
  updated_at: number;
  body: string;
}

/** Reads a turn row back into its stored form (the body stays the engine's JSON). */
export function turnFromRow(row: TurnRow): StoredTurn {
  return {
    turnId: row.turn_id,
    sessionKey: row.session_key,
    channel: row.channel,
    traceId: row.trace_id,
    version: row.version,
    waitingApprovalId: row.waiting_approval_id ?? undefined,
    updatedAt: row.updated_at,
    body: row.body,
  };
}
