import pg from "pg";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, SCHEMA_VERSION, StoreVersionError } from "../../src/store/migrations.ts";
import { openStore, storeKind } from "../../src/store/open-store.ts";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres-migrations.ts";
import { openPostgresStore } from "../../src/store/postgres-store.ts";
import type { Store } from "../../src/store/store.ts";
import { freePort } from "../support/free-port.ts";
import { waitUntil } from "../support/wait.ts";
import { pending } from "./contract/index.ts";
import { usePostgresServer } from "./postgres-server.ts";
import { tempDataDir } from "./temp-dir.ts";

const { server, freshDatabase } = usePostgresServer();

/** Runs SQL on a database directly, as an operator (or another Gatehouse version) would. */
async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function closeAll(stores: Store[]): Promise<void> {
  await Promise.all(stores.map((s) => s.close()));
}

describe("PostgreSQL schema migrations", () => {
  it("has one PostgreSQL step for every SQLite step, with the same meaning", () => {
    expect(POSTGRES_MIGRATIONS.map((m) => m.description)).toEqual(MIGRATIONS.map((m) => m.description));
  });

  it("migrates once when several replicas open a fresh database at the same moment", async () => {
    const url = await freshDatabase();
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore({ url })));
    const versions = await sql<{ version: number }>(url, "SELECT version FROM schema_migrations ORDER BY version");
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    await stores[0]!.setValue("k", "from replica 0");
    expect(await stores[3]!.getValue("k")).toBe("from replica 0");
    await closeAll(stores);
  });

  it("brings a version 1 database up to date, keeping its approvals and defaulting allowAlways", async () => {
    const url = await freshDatabase();
    await sql(url, POSTGRES_MIGRATIONS[0]!.sql);
    await sql(url, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at BIGINT NOT NULL);
      INSERT INTO schema_migrations VALUES (1, 'v1', 1700000000000);
      INSERT INTO approvals (id, session_key, turn_id, call_id, tool, args_hash, args_summary, channel, requester_id,
        approvers, target, created_at, expires_at, state)
      VALUES ('k3x9', 'slack:C1:171.2', 'turn-1', 'call_1', 'shell', 'abc123', 'make deploy', 'slack', 'U1',
        '["U1"]', '{"channel":"slack","conversationId":"C1","threadId":"171.2"}', 1700000400000, 1700000460000, 'pending')`);
    const store = await openPostgresStore({ url });
    const approval = await store.getApproval("k3x9");
    expect(approval).toMatchObject({ id: "k3x9", state: "pending", createdAt: 1700000400000 });
    expect(approval?.allowAlways).toBeUndefined();
    await store.close();
    expect((await sql(url, "SELECT version FROM schema_migrations")).length).toBe(SCHEMA_VERSION);
  });

  it("refuses a database written by a newer Gatehouse, saying what to do, and leaves it untouched", async () => {
    const url = await freshDatabase();
    await (await openPostgresStore({ url })).close();
    await sql(url, "INSERT INTO schema_migrations VALUES ($1, 'from the future', 0)", [SCHEMA_VERSION + 1]);

    const refusal = openPostgresStore({ url });
    await expect(refusal).rejects.toBeInstanceOf(StoreVersionError);
    await expect(refusal).rejects.toThrow(
      new RegExp(`schema version ${SCHEMA_VERSION + 1}.*only understands up to version ${SCHEMA_VERSION}.*upgrade Gatehouse`, "s"),
    );
    expect((await sql(url, "SELECT version FROM schema_migrations ORDER BY version")).length).toBe(SCHEMA_VERSION + 1);
  });

  it("creates none of its tables in a newer database it refuses", async () => {
    const url = await freshDatabase();
    await sql(url, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at BIGINT NOT NULL);
      INSERT INTO schema_migrations VALUES (${SCHEMA_VERSION + 5}, 'future', 0)`);
    await expect(openPostgresStore({ url })).rejects.toThrow(StoreVersionError);
    expect(await sql(url, "SELECT to_regclass('sessions') AS t")).toEqual([{ t: null }]);
  });
});

describe("PostgreSQL store across replicas", () => {
  it("lets exactly one of twenty simultaneous decisions from two replicas win", async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
    await a!.createApproval(pending("a1"));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? b! : a!).decideApproval("a1", i % 3 ? "approved" : "denied", { id: `U${i}` }, 2_000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect(await b!.getApproval("a1")).toMatchObject({ decidedById: `U${winner}`, state: winner % 3 ? "approved" : "denied" });
    await closeAll([a!, b!]);
  });

  it("accepts exactly one click per approval when two replicas click every approval at once", async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
    const ids = Array.from({ length: 60 }, (_, i) => `a${i}`);
    for (const id of ids) await a!.createApproval(pending(id));
    const clickAll = (store: Store, who: string) =>
      Promise.all(ids.map(async (id) => ((await store.decideApproval(id, "approved", { id: who }, 2_000)) ? id : undefined)));
    const [wonByA, wonByB] = (await Promise.all([clickAll(a!, "UA"), clickAll(b!, "UB")])).map((won) => won.filter(Boolean));
    expect(wonByA.length + wonByB.length).toBe(ids.length);
    expect(new Set([...wonByA, ...wonByB]).size).toBe(ids.length);
    await closeAll([a!, b!]);
  });

  it("handles an event delivered to two replicas at once exactly once", async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
    const events = Array.from({ length: 40 }, (_, i) => `Ev${i}`);
    const handled = await Promise.all(
      events.flatMap((id) => [a!.markSeen("slack", id, 60_000, 1_000), b!.markSeen("slack", id, 60_000, 1_000)]),
    );
    for (let i = 0; i < events.length; i++) expect([handled[2 * i], handled[2 * i + 1]].filter(Boolean)).toHaveLength(1);
    await closeAll([a!, b!]);
  });

  it("keeps the batches of two replicas appending to one session whole", async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
    const batch = (who: string, n: number) => Array.from({ length: 4 }, (_, i) => ({ role: "user" as const, content: `${who}${n}-${i}` }));
    await Promise.all(Array.from({ length: 10 }, (_, n) => (n % 2 ? a! : b!).appendHistory("s", batch(n % 2 ? "a" : "b", n))));
    const contents = (await a!.loadHistory("s", 100)).map((m) => m.content as string);
    expect(contents).toHaveLength(40);
    for (let i = 0; i < 40; i += 4) {
      const prefix = contents[i]!.split("-")[0];
      expect(contents.slice(i, i + 4)).toEqual([0, 1, 2, 3].map((k) => `${prefix}-${k}`));
    }
    await closeAll([a!, b!]);
  });

  it("deletes expired event ids so the dedupe table does not grow without bound", async () => {
    const url = await freshDatabase();
    const store = await openPostgresStore({ url });
    for (let i = 0; i < 20; i++) await store.markSeen("slack", `old-${i}`, 1_000, 0);
    await store.markSeen("slack", "new", 600_000, 3_600_000);
    expect(await sql(url, "SELECT event_id FROM seen_events")).toEqual([{ event_id: "new" }]);
    await store.close();
  });

  it("survives the server dropping its idle connections, and says so without the password", async () => {
    const url = await freshDatabase();
    const dropped: Error[] = [];
    const store = await openPostgresStore({ url, onConnectionError: (err) => dropped.push(err) });
    await store.setValue("k", "1");
    await sql(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
    await waitUntil(() => expect(dropped.length).toBeGreaterThan(0));
    expect(dropped[0]!.message).toMatch(/dropped a connection/);
    expect(dropped[0]!.message).not.toContain(new URL(url).password);
    expect(await store.getValue("k")).toBe("1");
    await store.close();
  });
});

describe("connecting to PostgreSQL", () => {
  it("names the host it could not reach, never the password", async () => {
    const port = await freePort();
    const url = `postgres://gate:Sup3r%2Fsecret-pw@127.0.0.1:${port}/gatehouse`;
    const error = await openPostgresStore({ url, connectTimeoutMs: 2_000 }).then(() => undefined, (err: Error) => err);
    expect(error?.message).toMatch(new RegExp(`Cannot connect to the Gatehouse database at postgres://gate@127\\.0\\.0\\.1:${port}/gatehouse: .*ECONNREFUSED.*DATABASE_URL`));
    expect(error?.message).not.toMatch(/Sup3r|secret-pw/);
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toMatch(/Sup3r|secret-pw/);
  });

  it("says that the password was refused, without repeating it", async () => {
    const url = new URL((await server()).url);
    url.password = "wrong-password-42";
    const error = await openPostgresStore({ url: url.toString() }).then(() => undefined, (err: Error) => err);
    expect(error?.message).toMatch(/Cannot connect to the Gatehouse database at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres: .*password authentication failed/);
    expect(error?.message).not.toContain("wrong-password-42");
  });

  it("refuses a malformed URL without repeating it", async () => {
    const error = await openPostgresStore({ url: "postgres://gate:hunter2@[bad host/db" }).then(() => undefined, (err: Error) => err);
    expect(error?.message).toMatch(/DATABASE_URL is not a valid URL/);
    expect(error?.message).not.toContain("hunter2");
    await expect(openPostgresStore({ url: "mysql://gate:hunter2@db/x" })).rejects.toThrow(/must start with postgres:\/\//);
  });

  it("is what openStore opens when a database URL is given", async () => {
    const url = await freshDatabase();
    expect(storeKind({ databaseUrl: url })).toBe("postgres");
    const store = await openStore({ dataDir: tempDataDir(), databaseUrl: url });
    await store.setValue("telegram.offset", "812");
    await store.close();
    expect(await sql(url, "SELECT value FROM kv WHERE key = 'telegram.offset'")).toEqual([{ value: "812" }]);
  });
});
