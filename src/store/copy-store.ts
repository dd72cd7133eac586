/**
 * Copies everything one store holds into another, through the Store interface: how a deployment
 * moves from the embedded SQLite file to PostgreSQL when it grows to several replicas
 * (`gatehouse store copy`, src/cli/store-copy.ts). Nothing here knows which kinds of store it
 * copies between.
 *
 * A record already in the destination (a session, approval, turn, receipt, value or Always rule
 * with the same key) is left as it is, and an audit entry already there is not added again, so a
 * copy that stopped half-way can be run again and ends with exactly one copy of everything. The
 * history of a session before its last `/new` is not copied: the Store interface keeps it but
 * never loads it.
 */
import type { AuditEntry, Store } from "./store.ts";

/** How many records of each kind; `messages` is the current history of the sessions. */
export interface StoreCounts {
  sessions: number;
  messages: number;
  approvals: number;
  turns: number;
  receipts: number;
  audit: number;
  alwaysRules: number;
  values: number;
}

/** What a copy did: records written, and records left alone because the destination had them. */
export interface CopyReport {
  copied: StoreCounts;
  alreadyThere: StoreCounts;
}

/** Thrown, before anything is written, when the destination holds data and `force` was not given. */
export class DestinationNotEmptyError extends Error {
  readonly contents: StoreCounts;
  constructor(contents: StoreCounts) {
    super(`The destination store is not empty: it holds ${describeCounts(contents)}.`);
    this.name = "DestinationNotEmptyError";
    this.contents = contents;
  }
}

/** Thrown when reading or writing failed part-way; `report` says what had been copied by then. */
export class StoreCopyError extends Error {
  readonly report: CopyReport;
  constructor(reason: string, report: CopyReport, cause: unknown) {
    super(reason, { cause });
    this.name = "StoreCopyError";
    this.report = report;
  }
}

/** How to copy. */
export interface CopyOptions {
  /** Copy into a destination that already holds data, keeping what it holds (default false). */
  force?: boolean;
}

/** The largest limit loadHistory takes: the whole current history. */
const WHOLE_HISTORY = Number.MAX_SAFE_INTEGER;
/** Receipts are copied in writes of this many. */
const RECEIPTS_PER_WRITE = 500;

/**
 * Copies every session (with its current history, in order, and its times), approval (pending
 * or decided), turn record, receipt, audit entry, remembered Always rule and named value from
 * `from` into `to`. Throws DestinationNotEmptyError when `to` holds anything and `force` is not
 * set, and StoreCopyError when a read or write fails. Closes neither store.
 */
export async function copyStore(from: Store, to: Store, options: CopyOptions = {}): Promise<CopyReport> {
  const existing = await contentsOf(to);
  if (!options.force && total(existing) > 0) throw new DestinationNotEmptyError(existing);

  const report: CopyReport = { copied: emptyCounts(), alreadyThere: emptyCounts() };
  const count = (kind: keyof StoreCounts, copied: boolean, n = 1): void => {
    report[copied ? "copied" : "alreadyThere"][kind] += n;
  };
  let step = "copying sessions";
  try {
    const sessionKeys = new Set((await to.listSessions()).map((s) => s.key));
    for (const session of await from.listSessions()) {
      const history = await from.loadHistory(session.key, WHOLE_HISTORY);
      const copy = !sessionKeys.has(session.key);
      if (copy) await to.importSession({ key: session.key, createdAt: session.createdAt, updatedAt: session.updatedAt }, history);
      count("sessions", copy);
      count("messages", copy, history.length);
    }

    step = "copying approvals";
    const approvalIds = new Set((await to.listApprovals()).map((a) => a.id));
    for (const approval of await from.listApprovals()) {
      const copy = !approvalIds.has(approval.id);
      if (copy) await to.createApproval(approval);
      count("approvals", copy);
    }

    step = "copying turn records";
    const turnIds = new Set((await to.listTurns()).map((t) => t.turnId));
    for (const turn of await from.listTurns()) {
      const copy = !turnIds.has(turn.turnId);
      if (copy) await to.saveTurn(turn);
      count("turns", copy);
    }

    step = "copying receipts";
    const receiptIds = new Set((await to.listReceipts()).map((r) => r.id));
    const receipts = (await from.listReceipts()).filter((receipt) => {
      const copy = !receiptIds.has(receipt.id);
      count("receipts", copy);
      return copy;
    });
    for (let i = 0; i < receipts.length; i += RECEIPTS_PER_WRITE) await to.saveReceipts(receipts.slice(i, i + RECEIPTS_PER_WRITE));

    step = "copying the audit log";
    // Entries have no id of their own: each one already in the destination stands for one equal
    // entry of the source, so that equal entries (two identical clicks) are each copied once.
    // The destination chains what it is given (audit-chain.ts): into an empty store the chain comes
    // out with the source's hashes; run `gatehouse approvals verify` on the source before copying,
    // since a copy of an edited log is chained afresh and verifies.
    const auditThere = new Map<string, number>();
    for (const entry of await to.listAudit()) auditThere.set(auditKey(entry), (auditThere.get(auditKey(entry)) ?? 0) + 1);
    for (const entry of await from.listAudit()) {
      const key = auditKey(entry);
      const left = auditThere.get(key) ?? 0;
      if (left > 0) auditThere.set(key, left - 1);
      else await to.appendAudit(entry);
      count("audit", left === 0);
    }

    step = "copying Always rules";
    const rulesThere = new Set((await to.listAlwaysRules()).map((r) => JSON.stringify([r.scope, r.tool])));
    for (const rule of await from.listAlwaysRules()) {
      const copy = !rulesThere.has(JSON.stringify([rule.scope, rule.tool]));
      if (copy) await to.rememberAlways(rule.scope, rule.tool, rule.createdAt, { id: rule.id, expiresAt: rule.expiresAt, personName: rule.personName });
      count("alwaysRules", copy);
    }

    step = "copying named values";
    const valueKeys = new Set((await to.listValues("")).map((v) => v.key));
    for (const { key, value } of await from.listValues("")) {
      const copy = !valueKeys.has(key);
      if (copy) await to.setValue(key, value);
      count("values", copy);
    }
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new StoreCopyError(`Failed while ${step}: ${reason}`, report, err);
  }
  return report;
}

/** How many records of each kind a store holds. */
export async function contentsOf(store: Store): Promise<StoreCounts> {
  const sessions = await store.listSessions();
  return {
    sessions: sessions.length,
    messages: sessions.reduce((sum, s) => sum + s.messageCount, 0),
    approvals: (await store.listApprovals()).length,
    turns: (await store.listTurns()).length,
    receipts: (await store.listReceipts()).length,
    audit: (await store.listAudit()).length,
    alwaysRules: (await store.listAlwaysRules()).length,
    values: (await store.listValues("")).length,
  };
}

/** Labels for each kind, singular and plural, in the order a copy goes through them. */
export const KIND_LABELS: ReadonlyArray<[keyof StoreCounts, string, string]> = [
  ["sessions", "session", "sessions"],
  ["messages", "history message", "history messages"],
  ["approvals", "approval", "approvals"],
  ["turns", "turn record", "turn records"],
  ["receipts", "receipt", "receipts"],
  ["audit", "audit entry", "audit entries"],
  ["alwaysRules", "Always rule", "Always rules"],
  ["values", "value", "values"],
];

/** "3 sessions, 1 audit entry": the kinds with any records, or "nothing". */
export function describeCounts(counts: StoreCounts): string {
  const parts = KIND_LABELS.filter(([kind]) => counts[kind] > 0).map(
    ([kind, one, many]) => `${counts[kind]} ${counts[kind] === 1 ? one : many}`,
  );
  return parts.length > 0 ? parts.join(", ") : "nothing";
}

function emptyCounts(): StoreCounts {
  return { sessions: 0, messages: 0, approvals: 0, turns: 0, receipts: 0, audit: 0, alwaysRules: 0, values: 0 };
}

function total(counts: StoreCounts): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** An entry's identity: its fields and their values, whatever order they were set in. */
function auditKey(entry: AuditEntry): string {
  return JSON.stringify(Object.entries(entry).filter(([, value]) => value !== undefined).sort(([a], [b]) => (a < b ? -1 : 1)));
}
