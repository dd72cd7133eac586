/**
 * The embedded store: one SQLite file, `<data dir>/gatehouse.db`, through Node's built-in
 * `node:sqlite` (no native build). WAL mode lets the CLI read while the bot writes; every
 * compare-and-set is a single statement, so it holds across processes sharing the file.
 */
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { ChatMessage } from "../model/types.ts";
import { chainEntry } from "./audit-chain.ts";
import { HistoryCache } from "./history-cache.ts";
import { decodeMessage, encodeMessage } from "./message-codec.ts";
import { assertSchemaNotNewer, migrate, StoreVersionError } from "./migrations.ts";
import {
  approvalFromRow, approvalParams, auditFromRow, auditParams, loggedAuditFromRow, receiptFromRow, receiptParams, sameSignedReceipt,
  turnFromRow, voteFromRow, type ApprovalRow, type ApprovalVoteRow, type AuditRow, type ReceiptRow, type TurnRow,
} from "./rows.ts";
import { prepareStatements, type Statements } from "./statements.ts";
import { alwaysFromRow, alwaysValues, type AlwaysRow } from "./always-rows.ts";
import {
  VALUE_SOON_MS,
  type AlwaysRule, type RememberAlwaysOptions, type ApprovalState, type ApprovalVote, type AuditEntry, type LoggedAuditEntry, type PendingApprovalRecord,
  type ReceiptRecord, type SessionInfo, type Store, type StoredTurn, type TurnEnd,
} from "./store.ts";

/** Where the store lives: a data folder (the file is created inside it), or memory for tests. */
export type SqliteStoreOptions = ({ dataDir: string } | { path: ":memory:" }) & {
  /** Clock for timestamps the interface does not pass in (history, sessions). Defaults to Date.now. */
  now?: () => number;
  /** How long a write waits for another process's lock before failing, in ms. */
  busyTimeoutMs?: number;
};

/** The database file's name inside the data folder. */
export const DATABASE_FILE = "gatehouse.db";

/** Expired dedupe rows are deleted at most this often. */
const SEEN_PURGE_INTERVAL_MS = 60_000;
/** Messages appended by one INSERT at most (a turn's are usually fewer). */
const MESSAGES_PER_INSERT = 16;

/**
 * Opens (creating and migrating when needed) the SQLite store. Throws a clear error when the
 * database was written by a newer Gatehouse.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const location = "dataDir" in options ? createDataFile(options.dataDir) : ":memory:";
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(location, { timeout: options.busyTimeoutMs ?? 5_000, enableForeignKeyConstraints: true });
  } catch (err) {
    throw cannotOpen(location, err);
  }
  try {
    // Checked before any pragma so that a newer Gatehouse's database is left exactly as it was.
    assertSchemaNotNewer(db, location);
    if (location !== ":memory:") chmodSync(location, 0o600);
    db.exec("PRAGMA journal_mode = WAL");
    // NORMAL is durable across process crashes in WAL mode; only a power cut can lose the last commits.
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    migrate(db, location);
    return new SqliteStore(db, prepareStatements(db), options.now ?? Date.now);
  } catch (err) {
    db.close();
    throw err instanceof StoreVersionError ? err : cannotOpen(location, err);
  }
}

function cannotOpen(location: string, cause: unknown): Error {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new Error(`Cannot open the Gatehouse store at ${location}: ${reason}`, { cause });
}

function createDataFile(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return join(dataDir, DATABASE_FILE);
}

/**
 * Rows are read as their interfaces in rows.ts without re-checking each column: the STRICT
 * tables already refuse a value of the wrong type.
 */
class SqliteStore implements Store {
  readonly #db: DatabaseSync;
  /** The prepared statements; use them through #q, which first commits the queued writes. */
  readonly #statements: Statements;
  readonly #now: () => number;
  readonly #history: HistoryCache;
  #lastSeenPurge = Number.NEGATIVE_INFINITY;
  /** Values given to setValueSoon, not written yet. */
  readonly #soon = new Map<string, string>();
  #soonTimer: NodeJS.Timeout | undefined;
  /**
   * Single-statement writes made in this turn of the event loop, committed together (see #write).
   * Any other use of a statement (#q) commits them first, so statements run in the order they were asked for.
   */
  #queued: QueuedWrite[] = [];
  #commitScheduled = false;
  /** INSERTs of 2 to MESSAGES_PER_INSERT messages in one statement, by count, prepared when first needed. */
  readonly #insertMessagesOf = new Map<number, StatementSync>();

  constructor(db: DatabaseSync, statements: Statements, now: () => number) {
    this.#db = db;
    this.#statements = statements;
    this.#now = now;
    this.#history = new HistoryCache(() => (statements.dataVersion.get() as { data_version: number }).data_version);
  }

  async appendHistory(sessionKey: string, messages: ChatMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const at = this.#now();
    const bodies = messages.map(encodeMessage);
    this.#transaction(() => {
      const { generation } = this.#q.touchSession.get({ key: sessionKey, at }) as { generation: number };
      this.#insertMessages(sessionKey, generation, at, bodies);
    });
    this.#history.appended(sessionKey, bodies);
  }

  async finishTurn(end: TurnEnd): Promise<void> {
    const at = this.#now();
    const bodies = end.messages.map(encodeMessage);
    this.#transaction(() => {
      if (bodies.length) {
        const { generation } = this.#q.touchSession.get({ key: end.sessionKey, at }) as { generation: number };
        this.#insertMessages(end.sessionKey, generation, at, bodies);
      }
      if (end.receipts?.length) this.#insertReceipts(end.receipts);
      if (end.checkpointed !== false) this.#q.deleteTurn.run({ turn_id: end.turnId });
      if (end.mark) this.#q.setValue.run({ key: end.mark.key, value: end.mark.value });
    });
    if (end.mark) this.#soon.delete(end.mark.key);
    if (bodies.length) this.#history.appended(end.sessionKey, bodies);
  }

  async loadHistory(sessionKey: string, limit: number): Promise<ChatMessage[]> {
    const n = Math.floor(limit);
    if (!(n > 0)) return [];
    const held = this.#history.load(sessionKey, n);
    if (held) return held;
    const rows = (this.#q.lastMessages.all({ key: sessionKey, limit: n }) as { body: string }[]).reverse();
    const messages = rows.map((row) => decodeMessage(row.body));
    this.#history.loaded(sessionKey, n, messages, rows.map((row) => row.body.length));
    return messages;
  }

  async importSession(session: Omit<SessionInfo, "messageCount">, messages: ChatMessage[]): Promise<void> {
    this.#transaction(() => {
      const created = this.#q.importSession.run({ key: session.key, created_at: session.createdAt, updated_at: session.updatedAt });
      if (created.changes !== 1) throw new Error(`A session with key ${session.key} is already stored.`);
      for (const message of messages) {
        this.#q.insertMessage.run({ session_key: session.key, generation: 1, at: session.updatedAt, body: encodeMessage(message) });
      }
    });
    this.#history.forget(session.key);
  }

  async resetSession(sessionKey: string): Promise<void> {
    if (this.#q.resetSession.run({ key: sessionKey, at: this.#now() }).changes > 0) this.#history.reset(sessionKey);
    else this.#history.forget(sessionKey);
  }

  async listSessions(limit?: number): Promise<SessionInfo[]> {
    const rows = this.#q.listSessions.all({ limit: limitOrAll(limit) }) as {
      key: string; created_at: number; updated_at: number; message_count: number;
    }[];
    return rows.map((r) => ({ key: r.key, createdAt: r.created_at, updatedAt: r.updated_at, messageCount: r.message_count }));
  }

  async markSeen(channel: string, eventId: string, ttlMs: number, now = this.#now()): Promise<boolean> {
    if (now - this.#lastSeenPurge >= SEEN_PURGE_INTERVAL_MS || now < this.#lastSeenPurge) {
      this.#lastSeenPurge = now;
      void this.#write(() => this.#q.purgeSeen.run({ now })).catch(() => {
        // Expired ids are purged again at the next interval.
      });
    }
    // Inserts a new id, or revives an expired one; an id still within its TTL changes nothing.
    return this.#write(() => this.#q.markSeen.run({ channel, event_id: eventId, expires_at: now + ttlMs, now }).changes === 1);
  }

  async createApproval(record: PendingApprovalRecord): Promise<void> {
    this.#q.insertApproval.run(approvalParams(record));
  }

  async getApproval(id: string): Promise<PendingApprovalRecord | undefined> {
    const row = this.#q.getApproval.get({ id }) as ApprovalRow | undefined;
    return row ? approvalFromRow(row) : undefined;
  }

  async setApprovalCardMessage(id: string, messageId: string): Promise<void> {
    this.#q.setCardMessage.run({ id, card_message_id: messageId });
  }

  async decideApproval(
    id: string,
    state: Exclude<ApprovalState, "pending">,
    by: { id?: string; name?: string },
    at: number,
    reason?: string,
  ): Promise<boolean> {
    const params = { id, state, by_id: by.id ?? null, by_name: by.name ?? null, at, reason: reason ?? null };
    const statement = state === "expired" ? this.#q.decideExpired : this.#q.decideBeforeExpiry;
    return statement.run(params).changes === 1;
  }

  async listApprovals(state?: ApprovalState): Promise<PendingApprovalRecord[]> {
    const rows = (state ? this.#q.listApprovalsIn.all({ state }) : this.#q.listApprovals.all()) as unknown as ApprovalRow[];
    return rows.map(approvalFromRow);
  }

  async addApprovalVote(approvalId: string, vote: ApprovalVote): Promise<{ added: boolean; votes: ApprovalVote[] }> {
    const params = { approval_id: approvalId, voter_id: vote.voterId, voter_name: vote.voterName ?? null, at: vote.at };
    const added = this.#q.insertVote.run(params).changes === 1;
    const rows = this.#q.listVotes.all({ approval_id: approvalId }) as unknown as ApprovalVoteRow[];
    return { added, votes: rows.map(voteFromRow) };
  }

  async rememberAlways(scope: string, tool: string, at: number, options?: RememberAlwaysOptions): Promise<void> {
    this.#q.rememberAlways.run(alwaysValues(scope, tool, at, options));
  }

  async forgetAlways(scope: string): Promise<void> {
    this.#q.forgetAlways.run({ scope });
  }

  async hasAlways(scope: string, tool: string, now = Date.now()): Promise<boolean> {
    return this.#q.hasAlways.get({ scope, tool, now }) !== undefined;
  }

  async listAlwaysRules(filter: { under?: string } = {}): Promise<AlwaysRule[]> {
    const rows = filter.under === undefined ? this.#q.listAlwaysRules.all() : this.#q.listAlwaysRulesUnder.all({ scope: filter.under });
    return (rows as unknown as AlwaysRow[]).map(alwaysFromRow);
  }

  async getAlwaysRule(id: string): Promise<AlwaysRule | undefined> {
    const row = this.#q.getAlwaysRule.get({ id }) as unknown as AlwaysRow | undefined;
    return row ? alwaysFromRow(row) : undefined;
  }

  async revokeAlways(id: string): Promise<AlwaysRule | undefined> {
    const row = this.#q.revokeAlways.get({ id }) as unknown as AlwaysRow | undefined;
    return row ? alwaysFromRow(row) : undefined;
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    // BEGIN IMMEDIATE takes the write lock before the tail is read: another process appending to
    // the same file waits, so no two entries link to the same one.
    this.#transaction(() => {
      const tail = this.#q.auditTail.get() as { seq: number; hash: string } | undefined;
      const { entry: stored, link } = chainEntry(entry, tail);
      this.#q.insertAudit.run(auditParams(stored, link));
    });
  }

  async readAuditLog(page: { afterRow?: number; limit?: number } = {}): Promise<LoggedAuditEntry[]> {
    const rows = this.#q.readAuditLog.all({ after: page.afterRow ?? 0, limit: limitOrAll(page.limit) }) as unknown as AuditRow[];
    return rows.map(loggedAuditFromRow);
  }

  async listAudit(filter: { sessionKey?: string; kind?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const { sessionKey, kind } = filter;
    const limit = limitOrAll(filter.limit);
    const q = this.#q;
    const rows = (
      sessionKey !== undefined && kind !== undefined ? q.listAuditBySessionAndKind.all({ session_key: sessionKey, kind, limit })
      : sessionKey !== undefined ? q.listAuditBySession.all({ session_key: sessionKey, limit })
      : kind !== undefined ? q.listAuditByKind.all({ kind, limit })
      : q.listAudit.all({ limit })
    ) as unknown as AuditRow[];
    return rows.reverse().map(auditFromRow);
  }

  async saveReceipts(receipts: ReceiptRecord[]): Promise<void> {
    if (receipts.length) this.#transaction(() => this.#insertReceipts(receipts));
  }

  #insertReceipts(receipts: ReceiptRecord[]): void {
    for (const receipt of receipts) {
      if (this.#q.insertReceipt.run(receiptParams(receipt)).changes === 1) continue;
      // The same signed receipt saved again is harmless; a different one under a used id is a bug.
      const existing = this.#q.getReceipt.get({ id: receipt.id }) as ReceiptRow | undefined;
      if (!existing || !sameSignedReceipt(receiptFromRow(existing), receipt)) {
        throw new Error(`A different receipt with id ${receipt.id} is already stored.`);
      }
    }
  }

  async getReceipt(id: string): Promise<ReceiptRecord | undefined> {
    const row = this.#q.getReceipt.get({ id }) as ReceiptRow | undefined;
    return row ? receiptFromRow(row) : undefined;
  }

  async listReceipts(): Promise<ReceiptRecord[]> {
    return (this.#q.listReceipts.all() as unknown as ReceiptRow[]).map(receiptFromRow);
  }

  async saveTurn(turn: StoredTurn, receipts: ReceiptRecord[] = []): Promise<void> {
    const save = () => this.#q.saveTurn.run({
      turn_id: turn.turnId, session_key: turn.sessionKey, channel: turn.channel, trace_id: turn.traceId,
      version: turn.version, waiting_approval_id: turn.waitingApprovalId ?? null, updated_at: turn.updatedAt, body: turn.body,
    });
    // Direct, not queued: a checkpoint is on its turn's path, and a park is seen at once.
    if (receipts.length === 0) save();
    else this.#transaction(() => {
      this.#insertReceipts(receipts);
      save();
    });
  }

  async getTurn(turnId: string): Promise<StoredTurn | undefined> {
    const row = this.#q.getTurn.get({ turn_id: turnId }) as TurnRow | undefined;
    return row ? turnFromRow(row) : undefined;
  }

  async listTurns(): Promise<StoredTurn[]> {
    return (this.#q.listTurns.all() as unknown as TurnRow[]).map(turnFromRow);
  }

  async listTurnsOf(sessionKey: string): Promise<StoredTurn[]> {
    return (this.#q.listTurnsOf.all({ session_key: sessionKey }) as unknown as TurnRow[]).map(turnFromRow);
  }

  async deleteTurn(turnId: string): Promise<void> {
    await this.#write(() => this.#q.deleteTurn.run({ turn_id: turnId }));
  }

  async getValue(key: string): Promise<string | undefined> {
    const waiting = this.#soon.get(key);
    if (waiting !== undefined) return waiting;
    const row = this.#q.getValue.get({ key }) as { value: string } | undefined;
    return row?.value;
  }

  async getValues(keys: readonly string[]): Promise<Map<string, string>> {
    const values = new Map<string, string>();
    for (let i = 0; i < keys.length; i += 2) {
      const rows = this.#q.getTwoValues.all({ a: keys[i]!, b: keys[i + 1] ?? keys[i]! }) as Array<{ key: string; value: string }>;
      for (const row of rows) values.set(row.key, row.value);
    }
    for (const key of keys) {
      const waiting = this.#soon.get(key);
      if (waiting !== undefined) values.set(key, waiting);
    }
    return values;
  }

  async listValues(prefix: string): Promise<Array<{ key: string; value: string }>> {
    const rows = this.#q.listValues.all({ prefix }) as Array<{ key: string; value: string }>;
    if (this.#soon.size === 0) return rows;
    const values = new Map(rows.map((r) => [r.key, r.value]));
    for (const [key, value] of this.#soon) if (key.startsWith(prefix)) values.set(key, value);
    return [...values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, value]) => ({ key, value }));
  }

  async deleteValue(key: string): Promise<void> {
    this.#soon.delete(key);
    await this.#write(() => this.#q.deleteValue.run({ key }));
  }

  async setValue(key: string, value: string): Promise<void> {
    this.#soon.delete(key);
    await this.#write(() => this.#q.setValue.run({ key, value }));
  }

  async setValueSoon(key: string, value: string): Promise<void> {
    this.#soon.set(key, value);
    this.#soonTimer ??= setTimeout(() => this.#writeSoon(), VALUE_SOON_MS).unref();
  }

  /** Writes the values waiting from setValueSoon, in one transaction. */
  #writeSoon(): void {
    clearTimeout(this.#soonTimer);
    this.#soonTimer = undefined;
    if (this.#soon.size === 0 || !this.#db.isOpen) return;
    const values = [...this.#soon];
    this.#soon.clear();
    try {
      this.#transaction(() => {
        for (const [key, value] of values) this.#q.setValue.run({ key, value });
      });
    } catch {
      // Lost, as Store.setValueSoon allows: such values are written again when they next change.
    }
  }

  async close(): Promise<void> {
    if (!this.#db.isOpen) return;
    this.#commitQueued();
    this.#writeSoon();
    this.#db.close();
  }

  /** The statements, for any use but a queued write's: what is queued is committed first. */
  get #q(): Statements {
    if (this.#queued.length) this.#commitQueued();
    return this.#statements;
  }

  /**
   * A single-statement write, committed with the others made in the same turn of the event loop
   * (group commit): a commit costs more than the statements it carries, and under load many
   * conversations write at once. The promise settles once the write is committed, as before; every
   * read and transaction first commits what is queued, so everything reads as if each write had
   * been committed when it was made.
   */
  #write<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queued.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.#commitScheduled) return;
      this.#commitScheduled = true;
      setImmediate(() => {
        this.#commitScheduled = false;
        this.#commitQueued();
      });
    });
  }

  /** Commits the queued writes: one alone as it is, several in one transaction. */
  #commitQueued(): void {
    if (this.#queued.length === 0) return;
    const queued = this.#queued;
    this.#queued = [];
    if (!this.#db.isOpen) {
      for (const write of queued) write.reject(new Error("the store is closed"));
      return;
    }
    if (queued.length === 1) {
      const [write] = queued;
      try {
        write!.resolve(write!.work());
      } catch (err) {
        write!.reject(err);
      }
      return;
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const q = this.#statements;
    try {
      q.begin.run();
      // A statement that fails (a constraint) fails alone: the transaction keeps the others.
      for (const write of queued) {
        try {
          outcomes.push({ ok: true, value: write.work() });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      q.commit.run();
    } catch (err) {
      if (this.#db.isTransaction) q.rollback.run();
      for (const write of queued) write.reject(err);
      return;
    }
    queued.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  }

  /** Appends messages to a session's history: a turn's few in one statement (each statement has a cost of its own). */
  #insertMessages(sessionKey: string, generation: number, at: number, bodies: string[]): void {
    for (let i = 0; i < bodies.length; i += MESSAGES_PER_INSERT) {
      const chunk = bodies.slice(i, i + MESSAGES_PER_INSERT);
      if (chunk.length === 1) {
        this.#q.insertMessage.run({ session_key: sessionKey, generation, at, body: chunk[0]! });
        continue;
      }
      let insert = this.#insertMessagesOf.get(chunk.length);
      if (!insert) {
        const rows = chunk.map((_, k) => `(?1, ?2, ?3, ?${k + 4})`).join(", ");
        insert = this.#db.prepare(`INSERT INTO messages (session_key, generation, at, body) VALUES ${rows}`);
        this.#insertMessagesOf.set(chunk.length, insert);
      }
      insert.run(sessionKey, generation, at, ...chunk);
    }
  }

  #transaction(work: () => void): void {
    this.#q.begin.run();
    try {
      work();
      this.#q.commit.run();
    } catch (err) {
      if (this.#db.isTransaction) this.#q.rollback.run();
      throw err;
    }
  }
}

interface QueuedWrite {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** SQLite reads a negative LIMIT as "no limit". */
function limitOrAll(limit: number | undefined): number {
  return limit === undefined ? -1 : Math.max(0, Math.floor(limit));
}
