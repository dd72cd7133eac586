/**
 * Coordination of replicas on PostgreSQL: session leases with fencing tokens, durable per-session
 * inboxes, stop requests and named leases, each one statement (or one short transaction), with
 * every time compared on the database's clock so replicas' clocks never disagree about expiry.
 *
 * Why written here instead of on a PostgreSQL job queue: graphile-worker's named serial queues
 * serialize a session's jobs, but a job locked by a replica that died is released only after its
 * lock timeout (4 hours by default), and pg-boss polls (seconds) and expires active jobs by a
 * per-job timeout sized for the longest turn. A chat needs a dead replica's thread picked up in
 * seconds, an approval that parks a turn for minutes without holding a job, and a fencing token
 * checked on every write of the turn; a lease row renewed every few seconds gives all three with
 * four small statements.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { IngressEnvelopeSchema } from "../envelope.ts";
import { POSTED_GRACE_MS, type Admission, type Coordination, type InboxItem, type SessionLease, type Unfinished } from "./coordination.ts";
import { describeDatabaseUrl, scrubSecrets } from "./database-url.ts";
import { NOW } from "./postgres-now.ts";

/** How often the offset between this machine's clock and the database's is measured again. */
const CLOCK_CHECK_MS = 60_000;

/** The database's clock minus this machine's, in ms (read halfway through the round trip). */
async function clockOffset(db: pg.Pool | pg.PoolClient): Promise<number> {
  const before = Date.now();
  const { rows } = await db.query<{ now: string }>(`SELECT ${NOW} AS now`);
  const after = Date.now();
  return Number(rows[0]!.now) - Math.round((before + after) / 2);
}

/**
 * The tables coordination uses, created idempotently at open (under an advisory lock of their own, so
 * replicas starting together do not race). They hold only short-lived state — leases, waiting
 * messages — so they need no versioned migrations of their own.
 */
export const COORDINATION_DDL = `
CREATE SEQUENCE IF NOT EXISTS lease_tokens;
CREATE TABLE IF NOT EXISTS session_leases (
  session_key TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  token BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  stop_requested BOOLEAN NOT NULL DEFAULT false
);
CREATE TABLE IF NOT EXISTS inbox (
  id BIGSERIAL PRIMARY KEY,
  session_key TEXT NOT NULL,
  trace_id TEXT NOT NULL,
  envelope JSONB NOT NULL,
  accepted_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS inbox_by_session ON inbox (session_key, id);
CREATE TABLE IF NOT EXISTS named_leases (
  name TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
`;

/** Opens coordination on the database at `url` (the same one the store uses). */
export async function openPostgresCoordination(url: string): Promise<Coordination> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => {}); // an idle client's error is seen again by the next query that needs one
  const client = await pool.connect().catch((err: Error) => {
    void pool.end();
    const { display, secrets } = describeDatabaseUrl(url);
    throw new Error(`Cannot reach the database at ${display} for replica coordination: ${scrubSecrets(err.message, secrets)}`);
  });
  let offset: number;
  try {
    await client.query("SELECT pg_advisory_lock(7412)");
    await client.query(COORDINATION_DDL);
    offset = await clockOffset(client);
  } finally {
    await client.query("SELECT pg_advisory_unlock(7412)").catch(() => {});
    client.release();
  }
  return new PostgresCoordination(pool, offset);
}

class PostgresCoordination implements Coordination {
  readonly replicaId = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  readonly #pool: pg.Pool;
  #offset: number;
  #offsetAt = Date.now();

  constructor(pool: pg.Pool, offset: number) {
    this.#pool = pool;
    this.#offset = offset;
  }

  now(): number {
    const local = Date.now();
    // Measured again now and then (a clock stepped by NTP, or drifting); the last offset serves meanwhile.
    if (Math.abs(local - this.#offsetAt) >= CLOCK_CHECK_MS) {
      this.#offsetAt = local;
      void clockOffset(this.#pool).then((offset) => (this.#offset = offset), () => {});
    }
    return local + this.#offset;
  }

  async push(envelope: InboxItem["envelope"], sessionKey: string, acceptedAt: number): Promise<{ id: number; ahead: number }> {
    const { rows } = await this.#pool.query<{ id: string; ahead: string }>(
      `WITH added AS (
         INSERT INTO inbox (session_key, trace_id, envelope, accepted_at) VALUES ($1, $2, $3, $4) RETURNING id
       )
       SELECT added.id, (SELECT count(*) FROM inbox WHERE session_key = $1) AS ahead FROM added`,
      [sessionKey, envelope.traceId ?? "", JSON.stringify(envelope), acceptedAt],
    );
    // The count ran on the snapshot before the insert: every row it saw is ahead of this one.
    return { id: Number(rows[0]!.id), ahead: Number(rows[0]!.ahead) };
  }

  async admit(
    envelope: InboxItem["envelope"], sessionKey: string, acceptedAt: number, options: { maxQueued: number; mark: { key: string; value: string } },
  ): Promise<Admission> {
    // One statement, one snapshot: the counts and checks see the inbox, leases and turns as they were
    // before this message went in (a sweep could otherwise take the session because of it).
    const { rows } = await this.#pool.query<{ id: string | null; ahead: string; leased: boolean; saved: boolean }>(
      `WITH room AS (SELECT count(*) AS n FROM inbox WHERE session_key = $1),
       marked AS (
         INSERT INTO kv (key, value) SELECT $6, $7 WHERE (SELECT n FROM room) < $5
         ON CONFLICT (key) DO UPDATE SET value = excluded.value
       ),
       added AS (
         INSERT INTO inbox (session_key, trace_id, envelope, accepted_at) SELECT $1, $2, $3, $4 WHERE (SELECT n FROM room) < $5 RETURNING id
       )
       SELECT (SELECT id FROM added) AS id, (SELECT n FROM room) AS ahead,
         EXISTS (SELECT 1 FROM session_leases WHERE session_key = $1 AND expires_at > ${NOW}) AS leased,
         EXISTS (SELECT 1 FROM turns WHERE session_key = $1) AS saved`,
      [sessionKey, envelope.traceId ?? "", JSON.stringify(envelope), acceptedAt, options.maxQueued, options.mark.key, options.mark.value],
    );
    const row = rows[0]!;
    if (row.id === null) return { queued: false, waiting: Number(row.ahead) };
    return { queued: true, id: Number(row.id), ahead: Number(row.ahead), working: row.leased || row.saved };
  }

  async waiting(sessionKey: string): Promise<number> {
    const { rows } = await this.#pool.query<{ n: string }>("SELECT count(*) AS n FROM inbox WHERE session_key = $1", [sessionKey]);
    return Number(rows[0]!.n);
  }

  async take(lease: SessionLease, options: { releaseIfEmpty?: boolean } = {}): Promise<InboxItem | undefined> {
    const { rows } = await this.#pool.query<{ id: string; session_key: string; envelope: unknown; accepted_at: string }>(
      `WITH taken AS (
         DELETE FROM inbox WHERE id = (
           SELECT i.id FROM inbox i WHERE i.session_key = $1
             AND EXISTS (SELECT 1 FROM session_leases l WHERE l.session_key = $1 AND l.token = $2 AND l.expires_at > ${NOW})
           ORDER BY i.accepted_at, i.id LIMIT 1 FOR UPDATE SKIP LOCKED
         ) RETURNING id, session_key, envelope, accepted_at
       ), released AS (
         DELETE FROM session_leases WHERE $3::boolean AND session_key = $1 AND token = $2 AND NOT EXISTS (SELECT 1 FROM taken)
       )
       SELECT * FROM taken`,
      [lease.sessionKey, lease.token, options.releaseIfEmpty === true],
    );
    const row = rows[0];
    if (!row) return undefined;
    return { id: Number(row.id), sessionKey: row.session_key, envelope: IngressEnvelopeSchema.parse(row.envelope), acceptedAt: Number(row.accepted_at) };
  }

  async acquire(sessionKey: string, ttlMs: number): Promise<SessionLease | undefined> {
    // A row left behind means its holder never let go (release deletes it): xmax is 0 only for a row just inserted.
    const { rows } = await this.#pool.query<{ token: string; taken_over: boolean }>(
      `INSERT INTO session_leases (session_key, owner, token, expires_at) VALUES ($1, $2, nextval('lease_tokens'), ${NOW} + $3)
       ON CONFLICT (session_key) DO UPDATE
         SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at, stop_requested = false
         WHERE session_leases.expires_at <= ${NOW}
       RETURNING token, (xmax::text <> '0') AS taken_over`,
      [sessionKey, this.replicaId, ttlMs],
    );
    const row = rows[0];
    return row ? { sessionKey, owner: this.replicaId, token: Number(row.token), takenOver: row.taken_over } : undefined;
  }

  async renew(leases: readonly SessionLease[], ttlMs: number): Promise<Array<Pick<SessionLease, "sessionKey" | "token">>> {
    if (leases.length === 0) return [];
    const { rows } = await this.#pool.query<{ session_key: string; token: string }>(
      `UPDATE session_leases AS l SET expires_at = ${NOW} + $1
         FROM unnest($2::text[], $3::bigint[]) AS mine(session_key, token)
        WHERE l.session_key = mine.session_key AND l.token = mine.token AND l.expires_at > ${NOW}
        RETURNING l.session_key, l.token`,
      [ttlMs, leases.map((l) => l.sessionKey), leases.map((l) => l.token)],
    );
    return rows.map((r) => ({ sessionKey: r.session_key, token: Number(r.token) }));
  }

  async holds(lease: SessionLease): Promise<boolean> {
    const r = await this.#pool.query(`SELECT 1 FROM session_leases WHERE session_key = $1 AND token = $2 AND expires_at > ${NOW}`, [
      lease.sessionKey, lease.token,
    ]);
    return r.rowCount === 1;
  }

  async release(lease: SessionLease): Promise<void> {
    await this.#pool.query("DELETE FROM session_leases WHERE session_key = $1 AND token = $2", [lease.sessionKey, lease.token]);
  }

  async requestStop(sessionKey: string): Promise<boolean> {
    const r = await this.#pool.query(`UPDATE session_leases SET stop_requested = true WHERE session_key = $1 AND expires_at > ${NOW}`, [sessionKey]);
    return r.rowCount === 1;
  }

  async takeStopRequests(): Promise<Array<Pick<SessionLease, "sessionKey" | "token">>> {
    const { rows } = await this.#pool.query<{ session_key: string; token: string }>(
      "UPDATE session_leases SET stop_requested = false WHERE owner = $1 AND stop_requested RETURNING session_key, token",
      [this.replicaId],
    );
    return rows.map((r) => ({ sessionKey: r.session_key, token: Number(r.token) }));
  }

  async orphaned(): Promise<string[]> {
    const free = `NOT EXISTS (SELECT 1 FROM session_leases l WHERE l.session_key = x.session_key AND l.expires_at > ${NOW})`;
    const { rows } = await this.#pool.query<{ session_key: string }>(
      // Saved turns first, then inboxes by their oldest message.
      `SELECT session_key FROM (
         SELECT session_key, min(id) AS first FROM inbox GROUP BY session_key
         UNION ALL SELECT session_key, 0 FROM turns WHERE waiting_approval_id IS NULL
         UNION ALL SELECT t.session_key, 0 FROM turns t JOIN approvals a ON a.id = t.waiting_approval_id WHERE a.state <> 'pending'
       ) x WHERE ${free} GROUP BY session_key ORDER BY min(first), session_key`,
    );
    return rows.map((r) => r.session_key);
  }

  async claimUnfinished(graceMs: number, channels: string[]): Promise<Unfinished[]> {
    const { rows } = await this.#pool.query<{ key: string; value: string }>(
      `DELETE FROM kv k WHERE k.key LIKE 'inflight:%'
         AND (k.value::jsonb ->> 'at')::bigint < ${NOW} - $1
         AND (k.value::jsonb -> 'replyTo' ->> 'channel') = ANY($2)
         AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.trace_id = substr(k.key, 10))
         AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.trace_id = substr(k.key, 10))
         AND NOT EXISTS (
           SELECT 1 FROM session_leases l WHERE l.session_key = (k.value::jsonb ->> 'sessionKey') AND l.expires_at > ${NOW}
         )
         -- A session with messages waiting is drained soon: the replica that takes it claims these
         -- first (claimUnfinishedOf), so that they go back into the inbox before the later ones are taken.
         AND NOT EXISTS (SELECT 1 FROM inbox w WHERE w.session_key = (k.value::jsonb ->> 'sessionKey'))
         AND ((k.value::jsonb ->> 'posted') IS NULL OR (k.value::jsonb ->> 'at')::bigint < ${NOW} - $3)
       RETURNING k.key, k.value`,
      [graceMs, channels, POSTED_GRACE_MS],
    );
    return rows.map((r) => ({ traceId: r.key.slice("inflight:".length), value: r.value }));
  }

  async claimUnfinishedOf(lease: SessionLease, graceMs: number): Promise<Unfinished[]> {
    const { rows } = await this.#pool.query<{ key: string; value: string }>(
      `WITH gone AS (
         DELETE FROM kv k WHERE k.key LIKE 'inflight:%'
           AND (k.value::jsonb ->> 'sessionKey') = $1
           AND (k.value::jsonb ->> 'at')::bigint < ${NOW} - $3
           AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.trace_id = substr(k.key, 10))
           AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.trace_id = substr(k.key, 10))
           AND EXISTS (SELECT 1 FROM session_leases l WHERE l.session_key = $1 AND l.token = $2 AND l.expires_at > ${NOW})
         RETURNING k.key, k.value
       )
       SELECT key, value FROM gone ORDER BY (value::jsonb ->> 'at')::bigint, key`,
      [lease.sessionKey, lease.token, graceMs],
    );
    return rows.map((r) => ({ traceId: r.key.slice("inflight:".length), value: r.value }));
  }

  async holdNamed(name: string, ttlMs: number): Promise<boolean> {
    const r = await this.#pool.query(
      `INSERT INTO named_leases (name, owner, expires_at) VALUES ($1, $2, ${NOW} + $3)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
         WHERE named_leases.owner = excluded.owner OR named_leases.expires_at <= ${NOW}`,
      [name, this.replicaId, ttlMs],
    );
    return r.rowCount === 1;
  }

  async releaseNamed(name: string): Promise<void> {
    await this.#pool.query("DELETE FROM named_leases WHERE name = $1 AND owner = $2", [name, this.replicaId]);
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
