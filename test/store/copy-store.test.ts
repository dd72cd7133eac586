import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/model/types.ts";
import { contentsOf, copyStore, DestinationNotEmptyError, StoreCopyError } from "../../src/store/copy-store.ts";
import { openPostgresStore } from "../../src/store/postgres-store.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import type { ReceiptRecord, Store, StoredTurn } from "../../src/store/store.ts";
import { pending } from "./contract/index.ts";
import { usePostgresServer } from "./postgres-server.ts";
import { tempDataDir } from "./temp-dir.ts";

const { freshDatabase } = usePostgresServer();

const deployThread: ChatMessage[] = [
  { role: "system", content: "be brief" },
  { role: "user", content: "deploy the site", name: "ana" },
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: '{"command":"make deploy"}' } }],
  },
  { role: "tool", tool_call_id: "c1", content: "deployed ✅ «ünïcode»" },
  { role: "assistant", content: "Done." },
];

const receipt = (id: string, at: number): ReceiptRecord => ({
  id, at, sessionKey: "slack:C1:171.2", callId: `call-${id}`, tool: "shell",
  argsCanonical: '{"approved":true,"command":"make deploy"}',
  outputHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", mac: `mac-${id}`,
});

const turn = (turnId: string, overrides: Partial<StoredTurn> = {}): StoredTurn => ({
  turnId, sessionKey: "slack:C1:171.2", channel: "slack", traceId: `trace-${turnId}`, version: 1,
  updatedAt: 1_700_000_300_000, body: JSON.stringify({ v: 1, messages: deployThread, iteration: 1 }), ...overrides,
});

/** A SQLite store holding some of every kind of record, as a bot that ran for a while leaves it. */
async function busySqliteStore(): Promise<Store> {
  let clock = 1_700_000_000_000;
  const store = await openSqliteStore({ dataDir: tempDataDir(), now: () => clock });
  await store.appendHistory("slack:C1:171.2", deployThread.slice(0, 2));
  clock += 60_000;
  await store.appendHistory("slack:C1:171.2", deployThread.slice(2));
  await store.appendHistory("telegram:42", [{ role: "user", content: "old secret plan" }]);
  clock += 60_000;
  await store.resetSession("telegram:42");
  await store.appendHistory("telegram:42", [{ role: "user", content: "fresh start" }]);
  await store.appendHistory("discord:7", [{ role: "user", content: "hi" }]);
  await store.resetSession("discord:7");

  await store.createApproval(pending("k3x9", { turnId: "t-parked", expiresAt: 1_700_000_900_000, cardMessageId: "171.3" }));
  await store.createApproval(pending("d1", { requesterName: "Ana", allowAlways: false, createdAt: 1_500 }));
  await store.decideApproval("d1", "denied", { id: "UADMIN", name: "Bo" }, 2_000, "not during the freeze");
  await store.createApproval(pending("a1", { createdAt: 1_200 }));
  await store.decideApproval("a1", "always", { id: "U1", name: "Ana" }, 1_300);

  await store.saveTurn(turn("t-parked", { waitingApprovalId: "k3x9", version: 2 }));
  await store.saveTurn(turn("t-checkpoint", { sessionKey: "telegram:42", channel: "telegram", updatedAt: 1_700_000_100_000 }));

  await store.saveReceipts([receipt("r-2", 1_700_000_200_000), receipt("r-1", 1_700_000_100_000)]);

  const click = { at: 1_300, kind: "approval", sessionKey: "slack:C1:171.2", tool: "shell", actorId: "U1", source: "backchannel", outcome: "always" };
  await store.appendAudit(click);
  await store.appendAudit({ at: 1_400, kind: "tool", sessionKey: "slack:C1:171.2", tool: "shell", traceId: "tr1", argsHash: "h", channel: "slack", outcome: "ok", detail: "exit 0" });
  // The same entry twice (a double click logged twice) is copied twice.
  await store.appendAudit(click);
  await store.appendAudit({ at: 2_000, kind: "approval", sessionKey: "slack:C1:171.2", tool: "shell", source: "policy", outcome: "denied" });

  await store.rememberAlways("slack:C1", "shell", 1_300);
  await store.rememberAlways("telegram:42", "http_fetch", 1_350);

  await store.setValue("telegram.offset", "981234567");
  await store.setValue("mcp.active:slack:C1:171.2", '["github.search"]');
  await store.setValue("inflight:trace-9", '{"channel":"telegram","sessionKey":"telegram:42"}');
  return store;
}

/** Everything a store holds, as its read methods return it. */
async function everything(store: Store) {
  const sessions = await store.listSessions();
  const histories = Object.fromEntries(
    await Promise.all(sessions.map(async (s) => [s.key, await store.loadHistory(s.key, Number.MAX_SAFE_INTEGER)] as const)),
  );
  return {
    sessions, histories,
    approvals: await store.listApprovals(),
    turns: await store.listTurns(),
    receipts: await store.listReceipts(),
    audit: await store.listAudit(),
    alwaysRules: await store.listAlwaysRules(),
    values: await store.listValues(""),
  };
}

/** The store, except that the `nth` call of `method` fails as a dropped connection would. */
function failingOn(store: Store, method: keyof Store, nth: number): Store {
  let calls = 0;
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== "function") return value;
      if (property !== method) return value.bind(target);
      return (...args: unknown[]) => {
        if (++calls === nth) return Promise.reject(new Error("Connection terminated unexpectedly"));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe("copying a SQLite store into PostgreSQL", () => {
  it("copies every session with its history and times, every approval, turn, receipt, audit entry, Always rule and value", async () => {
    const source = await busySqliteStore();
    const destination = await openPostgresStore({ url: await freshDatabase() });
    const report = await copyStore(source, destination);

    expect(report.copied).toEqual({ sessions: 3, messages: 6, approvals: 3, turns: 2, receipts: 2, audit: 4, alwaysRules: 2, values: 3 });
    expect(Object.values(report.alreadyThere).every((n) => n === 0)).toBe(true);
    const copied = await everything(destination);
    expect(copied).toEqual(await everything(source));
    // Into an empty store the decision log is chained again to the very same hashes: it still verifies.
    const chain = async (store: Store) => (await store.readAuditLog()).map(({ row: _row, ...entry }) => entry);
    expect(await chain(destination)).toEqual(await chain(source));
    expect(copied.histories["slack:C1:171.2"]).toEqual(deployThread);
    expect(copied.sessions.find((s) => s.key === "slack:C1:171.2")).toEqual({
      key: "slack:C1:171.2", createdAt: 1_700_000_000_000, updatedAt: 1_700_000_060_000, messageCount: 5,
    });
    expect(await destination.getApproval("d1")).toMatchObject({ state: "denied", decidedById: "UADMIN", allowAlways: false });
    expect((await destination.getTurn("t-parked"))?.waitingApprovalId).toBe("k3x9");
    expect(await destination.hasAlways("slack:C1", "shell")).toBe(true);
    expect(await destination.getValue("telegram.offset")).toBe("981234567");
    await Promise.all([source.close(), destination.close()]);
  });

  it("copies a session's history since its last /new, not what came before", async () => {
    const source = await busySqliteStore();
    const destination = await openPostgresStore({ url: await freshDatabase() });
    await copyStore(source, destination);
    expect(await destination.loadHistory("telegram:42", 100)).toEqual([{ role: "user", content: "fresh start" }]);
    expect(await destination.loadHistory("discord:7", 100)).toEqual([]);
    expect((await destination.listSessions()).map((s) => s.key)).toContain("discord:7");
    await Promise.all([source.close(), destination.close()]);
  });

  it("lets the copied store carry on: a parked approval can be decided and the history grows", async () => {
    const source = await busySqliteStore();
    const destination = await openPostgresStore({ url: await freshDatabase() });
    await copyStore(source, destination);
    expect(await destination.decideApproval("k3x9", "approved", { id: "U1" }, 1_700_000_400_000)).toBe(true);
    await destination.appendHistory("slack:C1:171.2", [{ role: "user", content: "thanks" }]);
    expect(await destination.loadHistory("slack:C1:171.2", 2)).toEqual([deployThread[4], { role: "user", content: "thanks" }]);
    await Promise.all([source.close(), destination.close()]);
  });

  it("refuses a second copy into the same destination and writes nothing", async () => {
    const source = await busySqliteStore();
    const destination = await openPostgresStore({ url: await freshDatabase() });
    await copyStore(source, destination);
    const before = await everything(destination);

    const refusal = await copyStore(source, destination).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(DestinationNotEmptyError);
    expect((refusal as DestinationNotEmptyError).contents).toMatchObject({ sessions: 3, audit: 4, values: 3 });
    expect((refusal as Error).message).toMatch(/not empty: it holds 3 sessions, 6 history messages, 3 approvals/);
    expect(await everything(destination)).toEqual(before);
    await Promise.all([source.close(), destination.close()]);
  });

  it("refuses a destination that holds no session but other data, such as a value", async () => {
    const source = await busySqliteStore();
    const destination = await openPostgresStore({ url: await freshDatabase() });
    await destination.setValue("telegram.offset", "5");
    await expect(copyStore(source, destination)).rejects.toThrow(/it holds 1 value\./);
    expect(await contentsOf(destination)).toMatchObject({ sessions: 0, values: 1 });
    await Promise.all([source.close(), destination.close()]);
  });

  it("with force, copies into a destination that holds data and keeps what it holds", async () => {
    const source = await busySqliteStore();
    const destination = await openPostgresStore({ url: await freshDatabase(), now: () => 5 });
    await destination.appendHistory("slack:C1:171.2", [{ role: "user", content: "already here" }]);
    await destination.setValue("telegram.offset", "981234999");
    await destination.appendAudit({ at: 1_300, kind: "approval", sessionKey: "slack:C1:171.2", tool: "shell", actorId: "U1", source: "backchannel", outcome: "always" });

    const report = await copyStore(source, destination, { force: true });
    expect(report.alreadyThere).toEqual({ sessions: 1, messages: 5, approvals: 0, turns: 0, receipts: 0, audit: 1, alwaysRules: 0, values: 1 });
    expect(report.copied).toMatchObject({ sessions: 2, messages: 1, approvals: 3, audit: 3, values: 2 });
    expect(await destination.loadHistory("slack:C1:171.2", 100)).toEqual([{ role: "user", content: "already here" }]);
    expect(await destination.getValue("telegram.offset")).toBe("981234999");
    expect(await destination.listAudit()).toEqual(await source.listAudit());
    await Promise.all([source.close(), destination.close()]);
  });

  it("reports what it copied when it fails half-way, and a forced second run completes it without doubling anything", async () => {
    const source = await busySqliteStore();
    const destination = await openPostgresStore({ url: await freshDatabase() });
    const failure = await copyStore(source, failingOn(destination, "appendAudit", 3)).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(StoreCopyError);
    expect((failure as Error).message).toBe("Failed while copying the audit log: Connection terminated unexpectedly");
    expect((failure as StoreCopyError).report.copied).toEqual({
      sessions: 3, messages: 6, approvals: 3, turns: 2, receipts: 2, audit: 2, alwaysRules: 0, values: 0,
    });

    const rest = await copyStore(source, destination, { force: true });
    expect(rest.copied).toEqual({ sessions: 0, messages: 0, approvals: 0, turns: 0, receipts: 0, audit: 2, alwaysRules: 2, values: 3 });
    expect(await everything(destination)).toEqual(await everything(source));
    await Promise.all([source.close(), destination.close()]);
  });
});
