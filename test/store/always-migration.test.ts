/** Remembered "always" decisions from before they had ids: both stores give each one an id of its own when they migrate. */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres-migrations.ts";
import { openPostgresStore } from "../../src/store/postgres-store.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { usePostgresServer } from "./postgres-server.ts";
import { tempDataDir } from "./temp-dir.ts";

const V1_SCHEMA = readFileSync(new URL("./fixtures/v1-schema.sql", import.meta.url), "utf8");
/** Rules exactly as a version 1 Gatehouse wrote them. */
const V1_RULES = `
INSERT INTO always_rules (scope, tool, created_at) VALUES ('session:slack:C1:1.2|sender:slack:U1', 'shell', 1700000410000);
INSERT INTO always_rules (scope, tool, created_at) VALUES ('session:slack:C1:1.2|sender:slack:U1', 'http_fetch', 1700000420000);
`;

const { freshDatabase } = usePostgresServer();

describe("always rules written before they had ids", () => {
  it("get distinct ids in SQLite, keep applying, and can be revoked by them", async () => {
    const dataDir = tempDataDir();
    mkdirSync(dataDir, { recursive: true });
    const db = new DatabaseSync(join(dataDir, "gatehouse.db"));
    db.exec(`${V1_SCHEMA}${V1_RULES}PRAGMA user_version = 1;`);
    db.close();
    const store = await openSqliteStore({ dataDir });
    const rules = await store.listAlwaysRules();
    expect(rules.map((r) => r.tool)).toEqual(["http_fetch", "shell"]);
    expect(new Set(rules.map((r) => r.id)).size).toBe(2);
    expect(rules.every((r) => /^[a-f0-9]{12}$/.test(r.id) && r.expiresAt === undefined)).toBe(true);
    expect(await store.hasAlways("session:slack:C1:1.2|sender:slack:U1", "shell")).toBe(true);
    await store.revokeAlways(rules[1]!.id);
    expect(await store.hasAlways("session:slack:C1:1.2|sender:slack:U1", "shell")).toBe(false);
    await store.close();
  });

  it("get distinct ids in PostgreSQL, keep applying, and can be revoked by them", async () => {
    const url = await freshDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(POSTGRES_MIGRATIONS[0]!.sql);
    await client.query(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at BIGINT NOT NULL);
      INSERT INTO schema_migrations VALUES (1, 'v1', 1700000000000);${V1_RULES}`);
    await client.end();
    const store = await openPostgresStore({ url });
    const rules = await store.listAlwaysRules();
    expect(rules.map((r) => r.tool)).toEqual(["http_fetch", "shell"]);
    expect(new Set(rules.map((r) => r.id)).size).toBe(2);
    expect(rules.every((r) => /^[a-f0-9]{12}$/.test(r.id) && r.expiresAt === undefined)).toBe(true);
    await store.revokeAlways(rules[1]!.id);
    expect(await store.hasAlways("session:slack:C1:1.2|sender:slack:U1", "shell")).toBe(false);
    await store.close();
  });
});
