/**
 * The store's schema, as an ordered list of migrations. The database's `PRAGMA user_version`
 * is the number of migrations applied. A shipped migration is never edited: a change to the
 * schema is a new step appended at the end (test/store/fixtures keeps a frozen copy of v1).
 */
import type { DatabaseSync } from "node:sqlite";

/** One step of the schema. Its version is its position in MIGRATIONS, counting from 1. */
export interface Migration {
  description: string;
  sql: string;
}

/** Every migration, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    description: "sessions, history, dedupe, approvals, always rules, audit, receipts, values",
    sql: `
CREATE TABLE sessions (
  key TEXT PRIMARY KEY,
  generation INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
  generation INTEGER NOT NULL,
  at INTEGER NOT NULL,
  body TEXT NOT NULL
) STRICT;
CREATE INDEX messages_by_session ON messages(session_key, generation, id);

CREATE TABLE seen_events (
  channel TEXT NOT NULL,
  event_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (channel, event_id)
) STRICT, WITHOUT ROWID;
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
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'always', 'denied', 'expired', 'cancelled')),
  decided_by_id TEXT,
  decided_by_name TEXT,
  decided_at INTEGER
) STRICT;
CREATE INDEX approvals_by_state ON approvals(state, created_at);

CREATE TABLE always_rules (
  scope TEXT NOT NULL,
  tool TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (scope, tool)
) STRICT, WITHOUT ROWID;

CREATE TABLE audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
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
) STRICT;
CREATE INDEX audit_by_session ON audit(session_key, id);
CREATE INDEX audit_by_kind ON audit(kind, id);

CREATE TABLE receipts (
  id TEXT PRIMARY KEY,
  at INTEGER NOT NULL,
  session_key TEXT NOT NULL,
  call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  args_canonical TEXT NOT NULL,
  output_hash TEXT NOT NULL,
  mac TEXT NOT NULL
) STRICT;

CREATE TABLE kv (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
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
  updated_at INTEGER NOT NULL,
  body TEXT NOT NULL
) STRICT;
CREATE INDEX turns_by_session ON turns(session_key);
ALTER TABLE approvals ADD COLUMN allow_always INTEGER NOT NULL DEFAULT 1;
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
  at INTEGER NOT NULL,
  PRIMARY KEY (approval_id, voter_id)
) STRICT;
`,
  },
  {
    description: "always rules: an id for each remembered decision, when it expires, and the name of the person it covers",
    sql: `
ALTER TABLE always_rules ADD COLUMN id TEXT;
ALTER TABLE always_rules ADD COLUMN expires_at INTEGER;
ALTER TABLE always_rules ADD COLUMN person_name TEXT;
UPDATE always_rules SET id = lower(hex(randomblob(6))) WHERE id IS NULL;
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
ALTER TABLE audit ADD COLUMN args_summary TEXT;
ALTER TABLE audit ADD COLUMN requester_id TEXT;
ALTER TABLE audit ADD COLUMN requester_name TEXT;
ALTER TABLE audit ADD COLUMN decided_by_id TEXT;
ALTER TABLE audit ADD COLUMN decided_by_name TEXT;
ALTER TABLE audit ADD COLUMN reason TEXT;
ALTER TABLE audit ADD COLUMN seq INTEGER;
ALTER TABLE audit ADD COLUMN prev_hash TEXT;
ALTER TABLE audit ADD COLUMN hash TEXT;
CREATE UNIQUE INDEX audit_by_seq ON audit(seq);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`,
  },
];

/** The schema version this code writes and understands. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Thrown when a database was written by a newer Gatehouse than this one. */
export class StoreVersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreVersionError";
  }
}

/** Reads the schema version recorded in the database header. */
export function schemaVersionOf(db: DatabaseSync): number {
  const row = db.prepare("PRAGMA user_version").get() as { user_version: number } | undefined;
  return row?.user_version ?? 0;
}

/** Throws StoreVersionError when the database was written by a newer Gatehouse; changes nothing. */
export function assertSchemaNotNewer(db: DatabaseSync, location: string): void {
  refuseNewer(schemaVersionOf(db), location);
}

/**
 * Brings the database up to SCHEMA_VERSION, one transaction per migration, and returns the
 * version it started from. `location` only names the database in error messages.
 */
export function migrate(db: DatabaseSync, location: string): { from: number; to: number } {
  const from = schemaVersionOf(db);
  refuseNewer(from, location);
  for (;;) {
    // IMMEDIATE takes the write lock before reading the version, so two processes opening
    // the same fresh database do not both try to create the tables.
    db.exec("BEGIN IMMEDIATE");
    try {
      const current = schemaVersionOf(db);
      refuseNewer(current, location);
      if (current >= SCHEMA_VERSION) {
        db.exec("COMMIT");
        return { from, to: current };
      }
      db.exec(MIGRATIONS[current]!.sql);
      db.exec(`PRAGMA user_version = ${current + 1}`);
      db.exec("COMMIT");
    } catch (err) {
      if (db.isTransaction) db.exec("ROLLBACK");
      throw err;
    }
  }
}

function refuseNewer(version: number, location: string): void {
  if (version > SCHEMA_VERSION) {
    throw new StoreVersionError(
      `The database at ${location} has schema version ${version}, but this version of Gatehouse ` +
        `only understands up to version ${SCHEMA_VERSION}. It was written by a newer Gatehouse: ` +
        `upgrade Gatehouse, or point GATEHOUSE_DATA_DIR at another folder.`,
    );
  }
}
