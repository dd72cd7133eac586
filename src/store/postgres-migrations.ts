/**
 * The PostgreSQL store's schema: the same tables as the SQLite migrations in migrations.ts, step
 * for step (version N here is version N there), written as PostgreSQL DDL. Timestamps are epoch
 * milliseconds in BIGINT columns. The applied versions are rows of `schema_migrations`.
 *
 * Several replicas may start at once against one database: migrations run under a session-level
 * advisory lock, so exactly one of them applies each step and the others wait, then find the
 * schema current. A shipped step is never edited: a change is a new step at the end of both lists.
 */
import type { PoolClient } from "pg";
import { SCHEMA_VERSION, StoreVersionError, type Migration } from "./migrations.ts";

/** Every PostgreSQL migration, oldest first; as long as MIGRATIONS (a test keeps them in step). */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    description: "sessions, history, dedupe, approvals, always rules, audit, receipts, values",
    sql: `
CREATE TABLE sessions (
  key TEXT PRIMARY KEY,
  generation INTEGER NOT NULL DEFAULT 1,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE messages (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
  generation INTEGER NOT NULL,
  at BIGINT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX messages_by_session ON messages(session_key, generation, id);

CREATE TABLE seen_events (
  channel TEXT NOT NULL,
  event_id TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (channel, event_id)
);
CREATE INDEX seen_events_by_expiry ON seen_events(expires_at);

CREATE TABLE approvals (
  id TEXT PRIMARY KEY,
  session_key TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  args_hash TEXT NOT NULL,
  args_summary TEXT NOT NULL,
  channel TEXT NOT NULL,
  requester_id TEXT NOT NULL,
  requester_name TEXT,
  approvers TEXT NOT NULL,
  target TEXT NOT NULL,
  card_message_id TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'always', 'denied', 'expired', 'cancelled')),
  decided_by_id TEXT,
  decided_by_name TEXT,
  decided_at BIGINT
);
CREATE INDEX approvals_by_state ON approvals(state, created_at);

CREATE TABLE always_rules (
  scope TEXT NOT NULL,
  tool TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (scope, tool)
);

CREATE TABLE audit (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at BIGINT NOT NULL,
  kind TEXT NOT NULL,
  trace_id TEXT,
  session_key TEXT,
  channel TEXT,
  tool TEXT,
  args_hash TEXT,
  actor_id TEXT,
  actor_name TEXT,
  source TEXT,
  outcome TEXT,
  detail TEXT
);
CREATE INDEX audit_by_session ON audit(session_key, id);
CREATE INDEX audit_by_kind ON audit(kind, id);

CREATE TABLE receipts (
  id TEXT PRIMARY KEY,
  at BIGINT NOT NULL,
  session_key TEXT NOT NULL,
  call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  args_canonical TEXT NOT NULL,
  output_hash TEXT NOT NULL,
  mac TEXT NOT NULL
);

CREATE TABLE kv (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`,
  },
  {
    description: "turns: checkpoints of turns in progress and turns parked while they wait for a person",
    sql: `
CREATE TABLE turns (
  turn_id TEXT PRIMARY KEY,
  session_key TEXT NOT NULL,
  channel TEXT NOT NULL,
  trace_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  waiting_approval_id TEXT,
  updated_at BIGINT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX turns_by_session ON turns(session_key);
ALTER TABLE approvals ADD COLUMN allow_always BOOLEAN NOT NULL DEFAULT true;
`,
  },
  {
    description: "approver rules: the rule each approval was asked under, and approvals given towards a quorum",
    sql: `
ALTER TABLE approvals ADD COLUMN approver_rule TEXT;
CREATE TABLE approval_votes (
  approval_id TEXT NOT NULL,
  voter_id TEXT NOT NULL,
  voter_name TEXT,
  at BIGINT NOT NULL,
  PRIMARY KEY (approval_id, voter_id)
);
`,
  },
  {
    description: "always rules: an id for each remembered decision, when it expires, and the name of the person it covers",
    sql: `
ALTER TABLE always_rules ADD COLUMN id TEXT, ADD COLUMN expires_at BIGINT, ADD COLUMN person_name TEXT;
UPDATE always_rules SET id = substr(md5(random()::text || scope || tool), 1, 12);
ALTER TABLE always_rules ALTER COLUMN id SET NOT NULL;
CREATE UNIQUE INDEX always_rules_by_id ON always_rules(id);
`,
  },
  {
    description: "approvals: the reason a person gave for a denial",
    sql: `
ALTER TABLE approvals ADD COLUMN decision_reason TEXT;
`,
  },
  {
    description: "audit: the decision log's fields (requester, argument summary, who decided, reason) and its hash chain",
    sql: `
ALTER TABLE audit ADD COLUMN args_summary TEXT, ADD COLUMN requester_id TEXT, ADD COLUMN requester_name TEXT,
  ADD COLUMN decided_by_id TEXT, ADD COLUMN decided_by_name TEXT, ADD COLUMN reason TEXT,
  ADD COLUMN seq BIGINT, ADD COLUMN prev_hash TEXT, ADD COLUMN hash TEXT;
CREATE UNIQUE INDEX audit_by_seq ON audit(seq);
CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit log is append-only';
END
$$;
CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON audit FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
`,
  },
];

/**
 * The advisory lock key ("GATEHOUS" as a 64-bit number). Advisory locks are per database, so
 * this serializes migrations of every Gatehouse sharing the database and nothing else.
 */
const MIGRATION_LOCK_KEY = "5134477706721711443";

/** The highest applied version, or 0 for a database Gatehouse never touched. */
export async function postgresSchemaVersion(client: PoolClient): Promise<number> {
  const table = await client.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  );
  if (!table.rows[0]?.present) return 0;
  const row = await client.query<{ version: number }>("SELECT coalesce(max(version), 0) AS version FROM schema_migrations");
  return row.rows[0]?.version ?? 0;
}

/**
 * Brings the database up to SCHEMA_VERSION, one transaction per step, under the advisory lock.
 * Run it on a connection of its own and discard that connection afterwards. Throws StoreVersionError, changing nothing, when a newer Gatehouse wrote the database.
 * `location` names the database in messages (without its password).
 */
export async function migratePostgres(
  client: PoolClient,
  location: string,
  options: { lockTimeoutMs: number; now: () => number },
): Promise<{ from: number; to: number }> {
  // lock_timeout bounds the wait for a replica that hangs while migrating. The caller discards
  // this connection afterwards, so the setting (and, should the unlock fail, the lock) dies with it.
  await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(options.lockTimeoutMs))}`);
  try {
    await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
  } catch (err) {
    if ((err as { code?: string }).code === "55P03") {
      throw new Error(
        `Another Gatehouse has been migrating the database at ${location} for more than ` +
          `${options.lockTimeoutMs} ms; waited for it and gave up. Start again once it is done.`,
      );
    }
    throw err;
  }
  try {
    const from = await postgresSchemaVersion(client);
    refuseNewer(from, location);
    await client.query(`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        description TEXT NOT NULL,
        applied_at BIGINT NOT NULL
      )`);
    for (let version = from + 1; version <= SCHEMA_VERSION; version++) {
      const step = POSTGRES_MIGRATIONS[version - 1]!;
      await client.query("BEGIN");
      try {
        await client.query(step.sql);
        await client.query("INSERT INTO schema_migrations (version, description, applied_at) VALUES ($1, $2, $3)", [
          version, step.description, options.now(),
        ]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      }
    }
    return { from, to: SCHEMA_VERSION };
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`).catch(() => undefined);
  }
}

function refuseNewer(version: number, location: string): void {
  if (version > SCHEMA_VERSION) {
    throw new StoreVersionError(
      `The database at ${location} has schema version ${version}, but this version of Gatehouse ` +
        `only understands up to version ${SCHEMA_VERSION}. It was written by a newer Gatehouse: ` +
        `upgrade Gatehouse, or point DATABASE_URL at another database.`,
    );
  }
}
