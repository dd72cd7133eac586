import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import type { PendingApprovalRecord } from "../../src/store/store.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { tempDataDir } from "./temp-dir.ts";

function pending(id: string, overrides: Partial<PendingApprovalRecord> = {}): PendingApprovalRecord {
  return {
    id,
    sessionKey: "slack:C1:171.2",
    turnId: "turn-1",
    callId: "call-1",
    tool: "shell",
    argsHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    argsSummary: "rm -rf build/",
    channel: "slack",
    requesterId: "U1",
    approvers: ["U1", "UADMIN"],
    target: { channel: "slack", conversationId: "C1", threadId: "171.2" },
    createdAt: 1_000,
    expiresAt: 61_000,
    state: "pending",
    ...overrides,
  };
}

describe("pending approvals", () => {
  it("stores and returns every field of an approval", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    const full = pending("a1", {
      requesterName: "Ana",
      cardMessageId: "171.3",
      target: { channel: "slack", account: "team2", conversationId: "C1", threadId: "171.2", replyToMessageId: "171.2" },
    });
    await store.createApproval(full);
    await store.createApproval(pending("a2"));
    expect(await store.getApproval("a1")).toEqual(full);
    expect(await store.getApproval("a2")).toEqual(pending("a2"));
    expect(await store.getApproval("nope")).toBeUndefined();
    await store.close();
  });

  it("remembers the card's message id once it is posted", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    await store.createApproval(pending("a1"));
    await store.setApprovalCardMessage("a1", "msg-99");
    expect((await store.getApproval("a1"))?.cardMessageId).toBe("msg-99");
    await store.close();
  });

  it("accepts exactly one of two simultaneous clicks", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    await store.createApproval(pending("a1"));
    const results = await Promise.all([
      store.decideApproval("a1", "approved", { id: "U1", name: "Ana" }, 2_000),
      store.decideApproval("a1", "denied", { id: "UADMIN", name: "Bo" }, 2_000),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const decided = await store.getApproval("a1");
    expect(decided).toMatchObject({ state: "approved", decidedById: "U1", decidedByName: "Ana", decidedAt: 2_000 });
    await store.close();
  });

  it("accepts exactly one click per approval when two connections race on the same database", async () => {
    const dataDir = tempDataDir();
    const store = await openSqliteStore({ dataDir });
    const ids = Array.from({ length: 200 }, (_, i) => `a${i}`);
    for (const id of ids) await store.createApproval(pending(id));
    const barrier = new SharedArrayBuffer(4);
    const race = (who: string) =>
      new Promise<string[]>((resolve, reject) => {
        const worker = new Worker(new URL("./decide-worker.ts", import.meta.url), {
          workerData: { dataDir, ids, who, barrier },
        });
        worker.once("message", resolve);
        worker.once("error", reject);
      });
    const [wonByA, wonByB] = await Promise.all([race("UA"), race("UB")]);

    expect(wonByA.length + wonByB.length).toBe(ids.length);
    expect(new Set([...wonByA, ...wonByB]).size).toBe(ids.length);
    for (const id of wonByB.slice(0, 5)) expect((await store.getApproval(id))?.decidedById).toBe("UB");
    await store.close();
  });

  it("refuses a click after the approval expired, but lets the timeout mark it expired", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    await store.createApproval(pending("a1", { expiresAt: 5_000 }));
    expect(await store.decideApproval("a1", "approved", { id: "U1" }, 5_000)).toBe(false);
    expect((await store.getApproval("a1"))?.state).toBe("pending");
    expect(await store.decideApproval("a1", "expired", {}, 5_001)).toBe(true);
    expect(await store.getApproval("a1")).toMatchObject({ state: "expired", decidedAt: 5_001 });
    expect(await store.decideApproval("a1", "approved", { id: "U1" }, 5_002)).toBe(false);
    await store.close();
  });

  it("refuses a decision on an unknown approval", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    expect(await store.decideApproval("ghost", "approved", { id: "U1" }, 1)).toBe(false);
    await store.close();
  });

  it("expires every pending approval at start-up and leaves decided ones alone", async () => {
    const dataDir = tempDataDir();
    const before = await openSqliteStore({ dataDir });
    await before.createApproval(pending("p1"));
    await before.createApproval(pending("p2", { createdAt: 1_500 }));
    await before.createApproval(pending("d1"));
    await before.decideApproval("d1", "denied", { id: "UADMIN" }, 2_000);
    await before.close();

    const after = await openSqliteStore({ dataDir });
    expect(await after.expireAllPending(9_000)).toBe(2);
    expect((await after.listApprovals("expired")).map((a) => a.id)).toEqual(["p1", "p2"]);
    expect(await after.listApprovals("pending")).toEqual([]);
    expect((await after.getApproval("d1"))?.state).toBe("denied");
    expect((await after.listApprovals()).map((a) => a.id)).toEqual(["d1", "p1", "p2"]);
    expect(await after.decideApproval("p1", "approved", { id: "U1" }, 9_001)).toBe(false);
    await after.close();
  });
});
