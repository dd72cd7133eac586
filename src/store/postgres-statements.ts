/**
 * Every SQL statement the PostgreSQL store runs. Parameters are positional (`$1`); the insert
 * statements take their values in the order of the column lists below, which name the keys of
 * the parameter records built in rows.ts. Text is ordered with COLLATE "C" so that lists come
 * out in the same (byte) order as from SQLite, whatever locale the database was created with.
 */

import { ALWAYS_COLUMNS } from "./always-rows.ts";
import { NOW } from "./postgres-now.ts";

/** The approvals columns, in the order insertApproval takes them. */
export const APPROVAL_COLUMNS = [
  "id", "session_key", "turn_id", "call_id", "tool", "args_hash", "args_summary", "channel",
  "requester_id", "requester_name", "approvers", "target", "card_message_id", "created_at", "expires_at", "state",
  "decided_by_id", "decided_by_name", "decided_at", "allow_always", "approver_rule", "decision_reason",
] as const;

/** The audit columns, in the order insertAudit takes them. */
export const AUDIT_COLUMNS = [
  "at", "kind", "trace_id", "session_key", "channel", "tool", "args_hash", "actor_id", "actor_name",
  "source", "outcome", "detail", "args_summary", "requester_id", "requester_name", "decided_by_id", "decided_by_name",
  "reason", "seq", "prev_hash", "hash",
] as const;

/**
 * The advisory lock that serializes appends to the audit chain across replicas ("GHAUDITC" as a
 * 64-bit number; the migration lock is another key).
 */
const AUDIT_CHAIN_LOCK_KEY = "5136427209489732675";

/** The receipts columns, in the order insertReceipts takes their arrays. */
export const RECEIPT_COLUMNS = [
  "id", "at", "session_key", "call_id", "tool", "args_canonical", "output_hash", "mac",
] as const;

function insertInto(table: string, columns: readonly string[]): string {
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})`;
}

/** The session's upsert of an append (session $1, at $2); `when` may hold it back (and with it the messages). */
const sessionUpsert = (when = "") => `session AS (
      INSERT INTO sessions (key, generation, created_at, updated_at)
      SELECT $1, 1, $2::bigint, $2::bigint ${when}
      ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at
      RETURNING generation
    )`;

/** The messages of an append ($3, in order), into the generation the session's upsert returned. */
const MESSAGES_INSERT = `INSERT INTO messages (session_key, generation, at, body)
    SELECT $1, session.generation, $2::bigint, m.body
    FROM session, unnest($3::text[]) WITH ORDINALITY AS m(body, n)
    ORDER BY m.n`;

/**
 * The end of a statement that appends messages ($3, in order) to a session's history ($1, at $2),
 * creating the session; `when` may hold the session's upsert back (and with it the messages).
 */
const appendMessages = (when = "") => `${sessionUpsert(when)}
    ${MESSAGES_INSERT}`;

/**
 * The head of a write made under a session lease (session key and token at `$key`, `$token`):
 * `live` holds the lease's row if it is live, locked until the write commits, so that no replica
 * takes the session over in between; each part of the write runs only `WHERE ${LIVE}`.
 */
const liveLease = (key: string, token: string) =>
  `live AS (SELECT 1 FROM session_leases WHERE session_key = ${key} AND token = ${token}::bigint AND expires_at > ${NOW} FOR SHARE)`;
const LIVE = "EXISTS (SELECT 1 FROM live)";

/** The statements, by name. */
export const PG = {
  // One statement, so one transaction: the session row's lock (taken by the upsert before any
  // message is inserted) keeps a concurrent append or reset from interleaving with this one, and
  // the messages get ids in the order given.
  appendHistory: `WITH ${appendMessages()}`,
  // One statement, so one transaction: the history appended (as appendHistory does), the turn's
  // record deleted, the mark set.
  finishTurn: `
    WITH gone AS (DELETE FROM turns WHERE turn_id = $4),
    mark AS (
      INSERT INTO kv (key, value) SELECT $5::text, $6::text WHERE $5::text IS NOT NULL
      ON CONFLICT (key) DO UPDATE SET value = excluded.value
    ),
    ${appendMessages("WHERE cardinality($3::text[]) > 0")}`,
  // The same under a session lease ($7, $8): nothing of it when the lease is not live (then live = 0).
  finishTurnFenced: `
    WITH ${liveLease("$7", "$8")},
    gone AS (DELETE FROM turns WHERE turn_id = $4 AND ${LIVE}),
    mark AS (
      INSERT INTO kv (key, value) SELECT $5::text, $6::text WHERE $5::text IS NOT NULL AND ${LIVE}
      ON CONFLICT (key) DO UPDATE SET value = excluded.value
    ),
    ${sessionUpsert(`WHERE cardinality($3::text[]) > 0 AND ${LIVE}`)},
    appended AS (${MESSAGES_INSERT})
    SELECT count(*)::int AS live FROM live`,
  lastMessages: `
    SELECT m.body FROM messages m JOIN sessions s ON s.key = m.session_key AND m.generation = s.generation
    WHERE s.key = $1 ORDER BY m.id DESC LIMIT $2`,
  // Like appendHistory, one statement: the messages are inserted only when the session row was.
  // A data-modifying WITH runs to completion whether or not the outer query reads it.
  importSession: `
    WITH session AS (
      INSERT INTO sessions (key, generation, created_at, updated_at) VALUES ($1, 1, $2, $3)
      ON CONFLICT (key) DO NOTHING
      RETURNING key, generation
    ), history AS (
      INSERT INTO messages (session_key, generation, at, body)
      SELECT session.key, session.generation, $3::bigint, m.body
      FROM session, unnest($4::text[]) WITH ORDINALITY AS m(body, n)
      ORDER BY m.n
    )
    SELECT count(*) AS created FROM session`,
  resetSession: `UPDATE sessions SET generation = generation + 1, updated_at = $2 WHERE key = $1`,
  // LIMIT NULL is LIMIT ALL.
  listSessions: `
    SELECT s.key, s.created_at, s.updated_at,
      (SELECT count(*) FROM messages m WHERE m.session_key = s.key AND m.generation = s.generation) AS message_count
    FROM sessions s ORDER BY s.updated_at DESC, s.key COLLATE "C" LIMIT $1`,

  purgeSeen: `DELETE FROM seen_events WHERE expires_at <= $1`,
  // Inserts a new id or revives an expired one (one row counted); a concurrent insert of the same
  // id waits for this one and then finds it unexpired (no row counted).
  markSeen: `
    INSERT INTO seen_events (channel, event_id, expires_at) VALUES ($1, $2, $3)
    ON CONFLICT (channel, event_id) DO UPDATE SET expires_at = excluded.expires_at
    WHERE seen_events.expires_at <= $4`,

  insertApproval: insertInto("approvals", APPROVAL_COLUMNS),
  getApproval: `SELECT * FROM approvals WHERE id = $1`,
  insertVote: `
    INSERT INTO approval_votes (approval_id, voter_id, voter_name, at)
    SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM approvals WHERE id = $1 AND state = 'pending')
    ON CONFLICT (approval_id, voter_id) DO NOTHING`,
  listVotes: `SELECT * FROM approval_votes WHERE approval_id = $1 ORDER BY at, voter_id COLLATE "C"`,
  setCardMessage: `UPDATE approvals SET card_message_id = $2 WHERE id = $1`,
  // The compare-and-set: a row is updated only while it is still pending (and, for a click, not
  // yet expired). Concurrent decides on one row queue on its lock; after the first commits, the
  // others re-check the WHERE clause against the decided row and update nothing.
  decideBeforeExpiry: `
    UPDATE approvals SET state = $2, decided_by_id = $3, decided_by_name = $4, decided_at = $5, decision_reason = $6
    WHERE id = $1 AND state = 'pending' AND expires_at > $5`,
  decideExpired: `
    UPDATE approvals SET state = $2, decided_by_id = $3, decided_by_name = $4, decided_at = $5, decision_reason = $6
    WHERE id = $1 AND state = 'pending'`,
  listApprovals: `SELECT * FROM approvals ORDER BY created_at, id COLLATE "C"`,
  listApprovalsIn: `SELECT * FROM approvals WHERE state = $1 ORDER BY created_at, id COLLATE "C"`,

  // A decision already there stays as it was given, unless it has expired.
  rememberAlways: `
    INSERT INTO always_rules (id, scope, tool, created_at, expires_at, person_name) VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (scope, tool) DO UPDATE SET id = excluded.id, created_at = excluded.created_at,
      expires_at = excluded.expires_at, person_name = excluded.person_name
    WHERE always_rules.expires_at IS NOT NULL AND always_rules.expires_at <= excluded.created_at`,
  hasAlways: `
    SELECT 1 AS found FROM always_rules WHERE scope = $1 AND tool = $2 AND (expires_at IS NULL OR expires_at > $3)`,
  forgetAlways: `DELETE FROM always_rules WHERE scope = $1 OR left(scope, length($1) + 1) = $1 || '|'`,
  listAlwaysRules: `SELECT ${ALWAYS_COLUMNS} FROM always_rules ORDER BY scope COLLATE "C", tool COLLATE "C"`,
  listAlwaysRulesUnder: `
    SELECT ${ALWAYS_COLUMNS} FROM always_rules WHERE scope = $1 OR left(scope, length($1) + 1) = $1 || '|'
    ORDER BY scope COLLATE "C", tool COLLATE "C"`,
  getAlwaysRule: `SELECT ${ALWAYS_COLUMNS} FROM always_rules WHERE id = $1`,
  revokeAlways: `DELETE FROM always_rules WHERE id = $1 RETURNING ${ALWAYS_COLUMNS}`,

  insertAudit: insertInto("audit", AUDIT_COLUMNS),
  // Opens an append: one simple query (no parameters), so BEGIN and the lock take one round trip.
  // The transaction-level lock is held until COMMIT or ROLLBACK; the tail is read after it is taken
  // (READ COMMITTED: each statement sees what committed before it started), so it is the real tail.
  beginAuditAppend: `BEGIN; SELECT pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK_KEY})`,
  auditTail: `SELECT seq, hash FROM audit WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1`,
  readAuditLog: `SELECT * FROM audit WHERE id > $1 ORDER BY id LIMIT $2`,
  // The newest N matching entries; the caller puts them back in time order. A NULL filter matches
  // everything (the planner folds it away, since each query is planned with its values).
  listAudit: `
    SELECT * FROM audit WHERE ($1::text IS NULL OR session_key = $1) AND ($2::text IS NULL OR kind = $2)
    ORDER BY id DESC LIMIT $3`,

  // Many receipts in one statement, one array per column; the ids it returns are the ones inserted.
  insertReceipts: `
    INSERT INTO receipts (${RECEIPT_COLUMNS.join(", ")})
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
    ON CONFLICT (id) DO NOTHING
    RETURNING id`,
  getReceipt: `SELECT * FROM receipts WHERE id = $1`,
  listReceipts: `SELECT * FROM receipts ORDER BY at, id COLLATE "C"`,

  saveTurn: `
    INSERT INTO turns (turn_id, session_key, channel, trace_id, version, waiting_approval_id, updated_at, body)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    ON CONFLICT (turn_id) DO UPDATE SET version = excluded.version, waiting_approval_id = excluded.waiting_approval_id,
      updated_at = excluded.updated_at, body = excluded.body`,
  // The same under a session lease ($9, $10): no row written when the lease is not live.
  saveTurnFenced: `
    WITH ${liveLease("$9", "$10")}
    INSERT INTO turns (turn_id, session_key, channel, trace_id, version, waiting_approval_id, updated_at, body)
    SELECT $1, $2, $3, $4, $5::int, $6, $7::bigint, $8 WHERE ${LIVE}
    ON CONFLICT (turn_id) DO UPDATE SET version = excluded.version, waiting_approval_id = excluded.waiting_approval_id,
      updated_at = excluded.updated_at, body = excluded.body`,
  getTurn: `SELECT * FROM turns WHERE turn_id = $1`,
  listTurns: `SELECT * FROM turns ORDER BY updated_at, turn_id COLLATE "C"`,
  listTurnsOf: `SELECT * FROM turns WHERE session_key = $1 ORDER BY updated_at, turn_id COLLATE "C"`,
  deleteTurn: `DELETE FROM turns WHERE turn_id = $1`,

  getValue: `SELECT value FROM kv WHERE key = $1`,
  getValues: `SELECT key, value FROM kv WHERE key = ANY($1::text[])`,
  // starts_with, not LIKE: a prefix may hold % or _.
  listValues: `SELECT key, value FROM kv WHERE starts_with(key, $1) ORDER BY key COLLATE "C"`,
  deleteValue: `DELETE FROM kv WHERE key = $1`,
  setValue: `
    INSERT INTO kv (key, value) VALUES ($1, $2)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
} as const;
