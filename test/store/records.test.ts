import { describe, expect, it } from "vitest";
import type { ReceiptRecord } from "../../src/store/store.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { tempDataDir } from "./temp-dir.ts";

describe("remembered 'always' decisions", () => {
  it("applies only to the scope and tool it was given for, and survives a restart", async () => {
    const dataDir = tempDataDir();
    const before = await openSqliteStore({ dataDir });
    await before.rememberAlways("slack:C1", "shell", 1_000);
    await before.rememberAlways("slack:C1", "shell", 2_000);
    await before.close();

    const store = await openSqliteStore({ dataDir });
    expect(await store.hasAlways("slack:C1", "shell")).toBe(true);
    expect(await store.hasAlways("slack:C2", "shell")).toBe(false);
    expect(await store.hasAlways("slack:C1", "write_file")).toBe(false);
    await store.close();
  });
});

describe("audit log", () => {
  it("lists entries oldest first, filtered by session and kind, keeping the newest N under a limit", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    await store.appendAudit({ at: 1, kind: "approval", sessionKey: "s1", tool: "shell", actorId: "U1", actorName: "Ana", source: "backchannel", outcome: "approved" });
    await store.appendAudit({ at: 2, kind: "tool", sessionKey: "s1", tool: "shell", outcome: "ok", traceId: "t1", argsHash: "h", channel: "slack", detail: "exit 0" });
    await store.appendAudit({ at: 3, kind: "approval", sessionKey: "s2", tool: "shell", source: "timeout", outcome: "denied" });
    await store.appendAudit({ at: 4, kind: "approval", sessionKey: "s1", tool: "http", source: "policy", outcome: "approved" });

    expect((await store.listAudit()).map((e) => e.at)).toEqual([1, 2, 3, 4]);
    expect((await store.listAudit({ sessionKey: "s1" })).map((e) => e.at)).toEqual([1, 2, 4]);
    expect((await store.listAudit({ kind: "approval" })).map((e) => e.at)).toEqual([1, 3, 4]);
    expect((await store.listAudit({ sessionKey: "s1", kind: "approval" })).map((e) => e.at)).toEqual([1, 4]);
    expect((await store.listAudit({ kind: "approval", limit: 2 })).map((e) => e.at)).toEqual([3, 4]);
    expect((await store.listAudit({ sessionKey: "s1" }))[1]).toEqual({
      at: 2, kind: "tool", sessionKey: "s1", tool: "shell", outcome: "ok", traceId: "t1", argsHash: "h", channel: "slack", detail: "exit 0",
    });
    await store.close();
  });
});

describe("receipts", () => {
  const receipt: ReceiptRecord = {
    id: "r-1",
    at: 1_700_000_000_000,
    sessionKey: "discord:42",
    callId: "call-7",
    tool: "read_file",
    argsCanonical: '{"approved":true,"path":"notes.md"}',
    outputHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    mac: "5d41402abc4b2a76b9719d911017c592",
  };

  it("returns a saved receipt by id after a restart", async () => {
    const dataDir = tempDataDir();
    const before = await openSqliteStore({ dataDir });
    await before.saveReceipt(receipt);
    await before.saveReceipt(receipt);
    await before.close();
    const store = await openSqliteStore({ dataDir });
    expect(await store.getReceipt("r-1")).toEqual(receipt);
    expect(await store.getReceipt("r-2")).toBeUndefined();
    await store.close();
  });

  it("refuses to overwrite a receipt with a different one under the same id", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    await store.saveReceipt(receipt);
    await expect(store.saveReceipt({ ...receipt, mac: "forged" })).rejects.toThrow(/different receipt with id r-1/);
    expect((await store.getReceipt("r-1"))?.mac).toBe(receipt.mac);
    await store.close();
  });
});

describe("named values", () => {
  it("stores, overwrites and keeps a value across restarts", async () => {
    const dataDir = tempDataDir();
    const before = await openSqliteStore({ dataDir });
    expect(await before.getValue("telegram.offset")).toBeUndefined();
    await before.setValue("telegram.offset", "100");
    await before.setValue("telegram.offset", "101");
    await before.close();
    const store = await openSqliteStore({ dataDir });
    expect(await store.getValue("telegram.offset")).toBe("101");
    await store.close();
  });
});
