import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/store/migrations.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { GENESIS_HASH } from "../../src/store/audit-chain.ts";
import { verifyDecisionLog } from "../../src/approval/decision-log-verify.ts";
import { tempDataDir } from "./temp-dir.ts";

const V1_SCHEMA = readFileSync(new URL("./fixtures/v1-schema.sql", import.meta.url), "utf8");

/** Rows exactly as a v1 Gatehouse wrote them. Literal text on purpose: never build these with current code. */
const V1_ROWS = `
INSERT INTO sessions (key, generation, created_at, updated_at) VALUES ('slack:C1:171.2', 2, 1700000000000, 1700000500000);
INSERT INTO messages (session_key, generation, at, body) VALUES
  ('slack:C1:171.2', 1, 1700000000000, '{"v":1,"role":"user","content":"from before /new"}'),
  ('slack:C1:171.2', 2, 1700000400000, '{"v":1,"role":"system","content":"You are Gatehouse."}'),
  ('slack:C1:171.2', 2, 1700000400000, '{"v":1,"role":"user","content":"deploy please","name":"ana"}'),
  ('slack:C1:171.2', 2, 1700000400000, '{"v":1,"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\\"cmd\\":\\"make deploy\\"}"}}]}'),
  ('slack:C1:171.2', 2, 1700000500000, '{"v":1,"role":"tool","tool_call_id":"call_1","content":"deployed"}'),
  ('slack:C1:171.2', 2, 1700000500000, '{"v":1,"role":"assistant","content":"Deployed."}');
INSERT INTO seen_events (channel, event_id, expires_at) VALUES ('slack', 'Ev01', 1700000600000);
INSERT INTO approvals (id, session_key, turn_id, call_id, tool, args_hash, args_summary, channel, requester_id,
  requester_name, approvers, target, card_message_id, created_at, expires_at, state, decided_by_id, decided_by_name, decided_at)
  VALUES ('k3x9', 'slack:C1:171.2', 'turn-1', 'call_1', 'shell', 'abc123', 'make deploy', 'slack', 'U1', 'Ana',
  '["U1","UADMIN"]', '{"channel":"slack","conversationId":"C1","threadId":"171.2"}', '171.3',
  1700000400000, 1700000460000, 'approved', 'UADMIN', 'Bo', 1700000410000);
INSERT INTO always_rules (scope, tool, created_at) VALUES ('slack:C1', 'shell', 1700000410000);
INSERT INTO audit (at, kind, session_key, tool, actor_id, source, outcome)
  VALUES (1700000410000, 'approval', 'slack:C1:171.2', 'shell', 'UADMIN', 'backchannel', 'approved');
INSERT INTO receipts (id, at, session_key, call_id, tool, args_canonical, output_hash, mac)
  VALUES ('r1', 1700000500000, 'slack:C1:171.2', 'call_1', 'shell', '{"approved":true,"cmd":"make deploy"}', 'ffee', 'aa11');
INSERT INTO kv (key, value) VALUES ('telegram.offset', '812');
PRAGMA user_version = 1;
`;

function writeDatabase(dataDir: string, sql: string): void {
  mkdirSync(dataDir, { recursive: true });
  const db = new DatabaseSync(join(dataDir, "gatehouse.db"));
  db.exec(sql);
  db.close();
}

describe("schema migrations", () => {
  it("keeps the shipped v1 migration exactly as old databases were made by it", () => {
    const frozen = V1_SCHEMA.replace(/^--.*\n/, "").trim();
    expect(MIGRATIONS[0]!.sql.trim()).toBe(frozen);
  });

  it("loads everything from a database written by the v1 schema", async () => {
    const dataDir = tempDataDir();
    writeDatabase(dataDir, V1_SCHEMA + V1_ROWS);
    const store = await openSqliteStore({ dataDir });

    expect(await store.loadHistory("slack:C1:171.2", 50)).toEqual([
      { role: "system", content: "You are Gatehouse." },
      { role: "user", content: "deploy please", name: "ana" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "shell", arguments: '{"cmd":"make deploy"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "deployed" },
      { role: "assistant", content: "Deployed." },
    ]);
    expect(await store.listSessions()).toEqual([
      { key: "slack:C1:171.2", createdAt: 1700000000000, updatedAt: 1700000500000, messageCount: 5 },
    ]);
    expect(await store.markSeen("slack", "Ev01", 60_000, 1700000550000)).toBe(false);
    expect(await store.getApproval("k3x9")).toEqual({
      id: "k3x9", sessionKey: "slack:C1:171.2", turnId: "turn-1", callId: "call_1", tool: "shell",
      argsHash: "abc123", argsSummary: "make deploy", channel: "slack", requesterId: "U1", requesterName: "Ana",
      approvers: ["U1", "UADMIN"], target: { channel: "slack", conversationId: "C1", threadId: "171.2" },
      cardMessageId: "171.3", createdAt: 1700000400000, expiresAt: 1700000460000, state: "approved",
      decidedById: "UADMIN", decidedByName: "Bo", decidedAt: 1700000410000,
    });
    expect(await store.hasAlways("slack:C1", "shell")).toBe(true);
    expect(await store.listAudit({ kind: "approval" })).toEqual([
      { at: 1700000410000, kind: "approval", sessionKey: "slack:C1:171.2", tool: "shell", actorId: "UADMIN", source: "backchannel", outcome: "approved" },
    ]);
    expect((await store.getReceipt("r1"))?.argsCanonical).toBe('{"approved":true,"cmd":"make deploy"}');
    expect(await store.getValue("telegram.offset")).toBe("812");

    await store.appendHistory("slack:C1:171.2", [{ role: "user", content: "thanks" }]);
    expect(await store.loadHistory("slack:C1:171.2", 1)).toEqual([{ role: "user", content: "thanks" }]);
    await store.close();
  });

  it("starts the decision log's hash chain after the entries a database held from before it", async () => {
    const dataDir = tempDataDir();
    writeDatabase(dataDir, V1_SCHEMA + V1_ROWS);
    const store = await openSqliteStore({ dataDir });
    await store.appendAudit({ at: 1700000600000, kind: "approval.decided", tool: "shell", source: "policy", outcome: "approved" });
    const log = await store.readAuditLog();
    expect(log.map((e) => [e.kind, e.seq ?? null])).toEqual([["approval", null], ["approval.decided", 1]]);
    expect(log[1]!.prevHash).toBe(GENESIS_HASH);
    expect(await verifyDecisionLog(log)).toMatchObject({ intact: true, checked: 1, unchained: 1 });
    await store.close();
  });

  it("brings a new database to the current schema version", async () => {
    const dataDir = tempDataDir();
    await (await openSqliteStore({ dataDir })).close();
    const db = new DatabaseSync(join(dataDir, "gatehouse.db"), { readOnly: true });
    expect(db.prepare("PRAGMA user_version").get()?.user_version).toBe(SCHEMA_VERSION);
    db.close();
  });

  it("refuses a database written by a newer Gatehouse, saying what to do, and leaves it untouched", async () => {
    const dataDir = tempDataDir();
    writeDatabase(dataDir, `CREATE TABLE future (x INTEGER); PRAGMA user_version = ${SCHEMA_VERSION + 1};`);
    await expect(openSqliteStore({ dataDir })).rejects.toThrow(
      new RegExp(`schema version ${SCHEMA_VERSION + 1}.*only understands up to version ${SCHEMA_VERSION}.*upgrade Gatehouse`, "s"),
    );
    const db = new DatabaseSync(join(dataDir, "gatehouse.db"), { readOnly: true });
    expect(db.prepare("PRAGMA user_version").get()?.user_version).toBe(SCHEMA_VERSION + 1);
    expect(db.prepare("PRAGMA journal_mode").get()?.journal_mode).toBe("delete");
    db.close();
  });

  it("refuses a history row in a message format newer than it understands, with a clear message", async () => {
    const dataDir = tempDataDir();
    writeDatabase(dataDir, V1_SCHEMA + `
      INSERT INTO sessions (key, generation, created_at, updated_at) VALUES ('s', 1, 1, 1);
      INSERT INTO messages (session_key, generation, at, body) VALUES ('s', 1, 1, '{"v":9,"role":"user","parts":[]}');
      PRAGMA user_version = 1;`);
    const store = await openSqliteStore({ dataDir });
    await expect(store.loadHistory("s", 10)).rejects.toThrow(/format version 9, newer than this Gatehouse understands/);
    await store.close();
  });

  it("names the file when the data folder holds something that is not a database", async () => {
    const dataDir = tempDataDir();
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, "gatehouse.db"), "this is not sqlite, just text that is long enough to be a header".repeat(10));
    await expect(openSqliteStore({ dataDir })).rejects.toThrow(/Cannot open the Gatehouse store at .*gatehouse\.db/);
  });
});
