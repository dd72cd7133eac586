/**
 * The server store: PostgreSQL through node-postgres (`pg`), for several replicas serving one
 * workspace (chosen by `DATABASE_URL`, see open-store.ts). Every compare-and-set the Store
 * interface promises is one statement (see postgres-statements.ts), so it holds across processes
 * and machines; the schema is migrated at open under an advisory lock, so replicas starting
 * together migrate once. BIGINT timestamps are read back as numbers (epoch ms fit exactly).
 */
import pg from "pg";
import type { ChatMessage } from "../model/types.ts";
import { describeDatabaseUrl, scrubSecrets, type DatabaseUrlInfo } from "./database-url.ts";
import { chainEntry } from "./audit-chain.ts";
import { decodeMessage, encodeMessage } from "./message-codec.ts";
import { StoreVersionError } from "./migrations.ts";
import { migratePostgres } from "./postgres-migrations.ts";
import { APPROVAL_COLUMNS, AUDIT_COLUMNS, PG, RECEIPT_COLUMNS } from "./postgres-statements.ts";
import { alwaysFromRow, alwaysValues, type AlwaysRow } from "./always-rows.ts";
import {
  approvalFromRow, approvalParams, auditFromRow, auditParams, loggedAuditFromRow, receiptFromRow, receiptParams, sameSignedReceipt,
  turnFromRow, voteFromRow, type ApprovalRow, type ApprovalVoteRow, type AuditRow, type ReceiptRow, type TurnRow,
} from "./rows.ts";
import {
  StaleLeaseError, type AlwaysRule, type RememberAlwaysOptions, type ApprovalState, type ApprovalVote, type AuditEntry, type LeaseFence, type LoggedAuditEntry,
  type PendingApprovalRecord, type ReceiptRecord, type SessionInfo, type Store, type StoredTurn, type TurnEnd,
} from "./store.ts";

/** Where the PostgreSQL store lives and how it connects. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:5432/database` (DATABASE_URL). */
  url: string;
  /** Clock for timestamps the interface does not pass in (history, sessions). Defaults to Date.now. */
  now?: () => number;
  /** Connections the pool may hold open (default 10). */
  maxConnections?: number;
  /** How long getting a connection (opening one, or waiting for a free one) may take, in ms (default 10 s). */
  connectTimeoutMs?: number;
  /** How long to wait for another replica's migration before giving up, in ms (default 60 s). */
  migrationLockTimeoutMs?: number;
  /**
   * Told when an idle pooled connection fails (the server restarted, a proxy cut it), e.g. to log
   * it. The pool drops that connection and the next query opens a new one; the store listens
   * either way, since an unheard pool error would end the process. The message has no password.
   */
  onConnectionError?: (err: Error) => void;
}

/** BIGINT (and count(*)) as a JS number, for this store's pool only: pg's global parsers stay untouched. */
const types = new pg.TypeOverrides();
types.setTypeParser(pg.types.builtins.INT8, "text", (value: string) => Number(value));

/** Expired dedupe rows are deleted at most this often (by each replica). */
const SEEN_PURGE_INTERVAL_MS = 60_000;

/**
 * Opens the PostgreSQL store: connects (failing with a clear message naming the host, never the
 * password), migrates the schema once across replicas, and refuses a database written by a newer
 * Gatehouse with a StoreVersionError.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const where = describeDatabaseUrl(options.url);
  const now = options.now ?? Date.now;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    // Names the replicas' connections in pg_stat_activity unless the URL or PGAPPNAME names them.
    fallback_application_name: "gatehouse",
    types,
  });
  pool.on("error", (err) => options.onConnectionError?.(scrubbedError(err, where)));
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(
      `Cannot connect to the Gatehouse database at ${where.display}: ${reasonOf(err, where)}. ` +
        `Check DATABASE_URL and that the server is running and reachable.`,
    );
  }
  // An error while the connection is checked out also rejects the query in flight; the listener
  // only keeps it from being thrown at the process as well.
  const ignore = (): void => undefined;
  client.on("error", ignore);
  try {
    await migratePostgres(client, where.display, { lockTimeoutMs: options.migrationLockTimeoutMs ?? 60_000, now });
  } catch (err) {
    client.release(true);
    await pool.end().catch(() => undefined);
    if (err instanceof StoreVersionError) throw err;
    throw new Error(`Cannot prepare the Gatehouse database at ${where.display}: ${reasonOf(err, where)}`);
  }
  client.off("error", ignore);
  // The migration connection held a session lock and settings: close it rather than pool it.
  client.release(true);
  return new PostgresStore(pool, now);
}

function reasonOf(err: unknown, where: DatabaseUrlInfo): string {
  const message = err instanceof Error ? err.message || String((err as { code?: unknown }).code ?? err.name) : String(err);
  return scrubSecrets(message, where.secrets);
}

function scrubbedError(err: Error, where: DatabaseUrlInfo): Error {
  return new Error(`The Gatehouse database at ${where.display} dropped a connection: ${reasonOf(err, where)}`);
}

/** Values for a positional insert, in the column list's order. */
function valuesOf(params: Record<string, unknown>, columns: readonly string[]): unknown[] {
  return columns.map((column) => params[column]);
}

class PostgresStore implements Store {
  readonly #pool: pg.Pool;
  readonly #now: () => number;
  #lastSeenPurge = Number.NEGATIVE_INFINITY;
  #closed = false;

  constructor(pool: pg.Pool, now: () => number) {
    this.#pool = pool;
    this.#now = now;
  }

  async #run(text: string, values: unknown[] = []): Promise<number> {
    return (await this.#pool.query(text, values)).rowCount ?? 0;
  }

  async #rows<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
    return (await this.#pool.query<T>(text, values)).rows;
  }

  async appendHistory(sessionKey: string, messages: ChatMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.#run(PG.appendHistory, [sessionKey, this.#now(), messages.map(encodeMessage)]);
  }

  async finishTurn(end: TurnEnd): Promise<void> {
    const values = [end.sessionKey, this.#now(), end.messages.map(encodeMessage), end.turnId, end.mark?.key ?? null, end.mark?.value ?? null];
    const { lease } = end;
    // Under a lease, the statement reports whether the lease was live; the receipts' transaction is then rolled back too.
    const finish = async (db: pg.Pool | pg.PoolClient) => {
      if (!lease) return void (await db.query(PG.finishTurn, values));
      const { rows } = await db.query<{ live: number }>(PG.finishTurnFenced, [...values, lease.sessionKey, lease.token]);
      if (!rows[0]?.live) throw new StaleLeaseError(lease);
    };
    if (!end.receipts?.length) return finish(this.#pool);
    await this.#transaction("BEGIN", async (client) => {
      await this.#insertReceipts(client, end.receipts!);
      await finish(client);
    });
  }

  /**
   * Runs `work` on one connection between `begin` (a statement that opens the transaction) and
   * COMMIT; rolls back when it throws. A connection that cannot roll back is not reused.
   */
  async #transaction(begin: string, work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await this.#pool.connect();
    const ignore = (): void => undefined;
    client.on("error", ignore);
    let broken = false;
    try {
      await client.query(begin);
      await work(client);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      client.off("error", ignore);
      client.release(broken);
    }
  }

  async #insertReceipts(client: pg.PoolClient, receipts: ReceiptRecord[]): Promise<void> {
    const params = receipts.map(receiptParams);
    const { rows } = await client.query<{ id: string }>(PG.insertReceipts, RECEIPT_COLUMNS.map((column) => params.map((p) => p[column])));
    const inserted = new Set(rows.map((r) => r.id));
    for (const receipt of receipts) {
      if (inserted.has(receipt.id)) continue;
      // The same signed receipt saved again is harmless; a different one under a used id is a bug.
      const [row] = (await client.query<ReceiptRow>(PG.getReceipt, [receipt.id])).rows;
      if (!row || !sameSignedReceipt(receiptFromRow(row), receipt)) {
        throw new Error(`A different receipt with id ${receipt.id} is already stored.`);
      }
    }
  }

  async loadHistory(sessionKey: string, limit: number): Promise<ChatMessage[]> {
    const n = Math.floor(limit);
    if (!(n > 0)) return [];
    const rows = await this.#rows<{ body: string }>(PG.lastMessages, [sessionKey, n]);
    return rows.reverse().map((row) => decodeMessage(row.body));
  }

  async importSession(session: Omit<SessionInfo, "messageCount">, messages: ChatMessage[]): Promise<void> {
    const [row] = await this.#rows<{ created: number }>(PG.importSession, [
      session.key, session.createdAt, session.updatedAt, messages.map(encodeMessage),
    ]);
    if (row?.created !== 1) throw new Error(`A session with key ${session.key} is already stored.`);
  }

  async resetSession(sessionKey: string): Promise<void> {
    await this.#run(PG.resetSession, [sessionKey, this.#now()]);
  }

  async listSessions(limit?: number): Promise<SessionInfo[]> {
    const rows = await this.#rows<{ key: string; created_at: number; updated_at: number; message_count: number }>(
      PG.listSessions, [limitOrAll(limit)],
    );
    return rows.map((r) => ({ key: r.key, createdAt: r.created_at, updatedAt: r.updated_at, messageCount: r.message_count }));
  }

  async markSeen(channel: string, eventId: string, ttlMs: number, now = this.#now()): Promise<boolean> {
    if (now - this.#lastSeenPurge >= SEEN_PURGE_INTERVAL_MS || now < this.#lastSeenPurge) {
      this.#lastSeenPurge = now;
      await this.#run(PG.purgeSeen, [now]);
    }
    return (await this.#run(PG.markSeen, [channel, eventId, now + ttlMs, now])) === 1;
  }

  async createApproval(record: PendingApprovalRecord): Promise<void> {
    await this.#run(PG.insertApproval, valuesOf(approvalParams(record), APPROVAL_COLUMNS));
  }

  async getApproval(id: string): Promise<PendingApprovalRecord | undefined> {
    const [row] = await this.#rows<ApprovalRow>(PG.getApproval, [id]);
    return row ? approvalFromRow(row) : undefined;
  }

  async setApprovalCardMessage(id: string, messageId: string): Promise<void> {
    await this.#run(PG.setCardMessage, [id, messageId]);
  }

  async decideApproval(
    id: string,
    state: Exclude<ApprovalState, "pending">,
    by: { id?: string; name?: string },
    at: number,
    reason?: string,
  ): Promise<boolean> {
    const statement = state === "expired" ? PG.decideExpired : PG.decideBeforeExpiry;
    return (await this.#run(statement, [id, state, by.id ?? null, by.name ?? null, at, reason ?? null])) === 1;
  }

  async listApprovals(state?: ApprovalState): Promise<PendingApprovalRecord[]> {
    const rows = state
      ? await this.#rows<ApprovalRow>(PG.listApprovalsIn, [state])
      : await this.#rows<ApprovalRow>(PG.listApprovals);
    return rows.map(approvalFromRow);
  }

  async addApprovalVote(approvalId: string, vote: ApprovalVote): Promise<{ added: boolean; votes: ApprovalVote[] }> {
    const added = (await this.#run(PG.insertVote, [approvalId, vote.voterId, vote.voterName ?? null, vote.at])) === 1;
    const rows = await this.#rows<ApprovalVoteRow>(PG.listVotes, [approvalId]);
    return { added, votes: rows.map(voteFromRow) };
  }

  async rememberAlways(scope: string, tool: string, at: number, options?: RememberAlwaysOptions): Promise<void> {
    const v = alwaysValues(scope, tool, at, options);
    await this.#run(PG.rememberAlways, [v.id, v.scope, v.tool, v.created_at, v.expires_at, v.person_name]);
  }

  async hasAlways(scope: string, tool: string, now = Date.now()): Promise<boolean> {
    return (await this.#rows(PG.hasAlways, [scope, tool, now])).length > 0;
  }

  async forgetAlways(scope: string): Promise<void> {
    await this.#run(PG.forgetAlways, [scope]);
  }

  async listAlwaysRules(filter: { under?: string } = {}): Promise<AlwaysRule[]> {
    const rows =
      filter.under === undefined
        ? await this.#rows<AlwaysRow>(PG.listAlwaysRules)
        : await this.#rows<AlwaysRow>(PG.listAlwaysRulesUnder, [filter.under]);
    return rows.map(alwaysFromRow);
  }

  async getAlwaysRule(id: string): Promise<AlwaysRule | undefined> {
    const [row] = await this.#rows<AlwaysRow>(PG.getAlwaysRule, [id]);
    return row ? alwaysFromRow(row) : undefined;
  }

  async revokeAlways(id: string): Promise<AlwaysRule | undefined> {
    const [row] = await this.#rows<AlwaysRow>(PG.revokeAlways, [id]);
    return row ? alwaysFromRow(row) : undefined;
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    // Replicas append one at a time (an advisory lock inside the transaction), so each entry links
    // to the one appended last whoever appended it; the unique index on seq backs this up.
    await this.#transaction(PG.beginAuditAppend, async (client) => {
      const [tail] = (await client.query<{ seq: number; hash: string }>(PG.auditTail)).rows;
      const { entry: stored, link } = chainEntry(entry, tail);
      await client.query(PG.insertAudit, valuesOf(auditParams(stored, link), AUDIT_COLUMNS));
    });
  }

  async readAuditLog(page: { afterRow?: number; limit?: number } = {}): Promise<LoggedAuditEntry[]> {
    const rows = await this.#rows<AuditRow>(PG.readAuditLog, [page.afterRow ?? 0, limitOrAll(page.limit)]);
    return rows.map(loggedAuditFromRow);
  }

  async listAudit(filter: { sessionKey?: string; kind?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const rows = await this.#rows<AuditRow>(PG.listAudit, [filter.sessionKey ?? null, filter.kind ?? null, limitOrAll(filter.limit)]);
    return rows.reverse().map(auditFromRow);
  }

  async saveReceipts(receipts: ReceiptRecord[]): Promise<void> {
    if (receipts.length) await this.#transaction("BEGIN", (client) => this.#insertReceipts(client, receipts));
  }

  async getReceipt(id: string): Promise<ReceiptRecord | undefined> {
    const [row] = await this.#rows<ReceiptRow>(PG.getReceipt, [id]);
    return row ? receiptFromRow(row) : undefined;
  }

  async listReceipts(): Promise<ReceiptRecord[]> {
    return (await this.#rows<ReceiptRow>(PG.listReceipts)).map(receiptFromRow);
  }

  async saveTurn(turn: StoredTurn, receipts: ReceiptRecord[] = [], lease?: LeaseFence): Promise<void> {
    const values = [turn.turnId, turn.sessionKey, turn.channel, turn.traceId, turn.version, turn.waitingApprovalId ?? null, turn.updatedAt, turn.body];
    const save = async (db: pg.Pool | pg.PoolClient) => {
      if (!lease) return void (await db.query(PG.saveTurn, values));
      // One row written (inserted or updated) while the lease is live; none when it is not.
      if ((await db.query(PG.saveTurnFenced, [...values, lease.sessionKey, lease.token])).rowCount !== 1) throw new StaleLeaseError(lease);
    };
    if (receipts.length === 0) await save(this.#pool);
    else await this.#transaction("BEGIN", async (client) => {
      await this.#insertReceipts(client, receipts);
      await save(client);
    });
  }

  async getTurn(turnId: string): Promise<StoredTurn | undefined> {
    const [row] = await this.#rows<TurnRow>(PG.getTurn, [turnId]);
    return row ? turnFromRow(row) : undefined;
  }

  async listTurns(): Promise<StoredTurn[]> {
    return (await this.#rows<TurnRow>(PG.listTurns)).map(turnFromRow);
  }

  async listTurnsOf(sessionKey: string): Promise<StoredTurn[]> {
    return (await this.#rows<TurnRow>(PG.listTurnsOf, [sessionKey])).map(turnFromRow);
  }

  async deleteTurn(turnId: string): Promise<void> {
    await this.#run(PG.deleteTurn, [turnId]);
  }

  async getValue(key: string): Promise<string | undefined> {
    const [row] = await this.#rows<{ value: string }>(PG.getValue, [key]);
    return row?.value;
  }

  async getValues(keys: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.#rows<{ key: string; value: string }>(PG.getValues, [[...keys]]);
    return new Map(rows.map((r) => [r.key, r.value]));
  }

  async setValue(key: string, value: string): Promise<void> {
    await this.#run(PG.setValue, [key, value]);
  }

  /** Written at once: other replicas read such values (the gauge for /status) from the database. */
  async setValueSoon(key: string, value: string): Promise<void> {
    await this.setValue(key, value);
  }

  async listValues(prefix: string): Promise<Array<{ key: string; value: string }>> {
    return (await this.#rows<{ key: string; value: string }>(PG.listValues, [prefix])).map((r) => ({ key: r.key, value: r.value }));
  }

  async deleteValue(key: string): Promise<void> {
    await this.#run(PG.deleteValue, [key]);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }
}

/** PostgreSQL reads LIMIT NULL as "no limit". */
function limitOrAll(limit: number | undefined): number | null {
  return limit === undefined ? null : Math.max(0, Math.floor(limit));
}
