/** Contract: the audit log is a hash chain, appended one entry at a time whoever appends. */
import { describe, expect, it } from "vitest";
import { auditEntryHash, GENESIS_HASH } from "../../../src/store/audit-chain.ts";
import type { AuditEntry, LoggedAuditEntry, Store } from "../../../src/store/store.ts";
import { openFresh, type StoreHarness } from "./harness.ts";

const decided: AuditEntry = {
  at: 1_700_000_000_000, kind: "approval.decided", traceId: "t1", sessionKey: "slack:C1:171.2", channel: "slack",
  tool: "shell", argsHash: "ab".repeat(32), argsSummary: '{"command":"kubectl get pods"}', actorId: "U2", actorName: "Bo",
  requesterId: "U1", requesterName: "Ana", decidedById: "U2", decidedByName: "Bo", source: "backchannel",
  outcome: "denied", reason: "not during the freeze", detail: 'autonomy "supervised" (exec tool)',
};

async function wholeLog(store: Store): Promise<LoggedAuditEntry[]> {
  return store.readAuditLog();
}

/** Every entry links to the one before it and its hash is the hash of its own fields. */
function expectIntactChain(log: LoggedAuditEntry[]): void {
  let prev = GENESIS_HASH;
  log.forEach((entry, i) => {
    expect(entry.seq).toBe(i + 1);
    expect(entry.prevHash).toBe(prev);
    expect(entry.hash).toBe(auditEntryHash(prev, i + 1, entry));
    prev = entry.hash!;
  });
}

/** Audit-chain behaviours every store must have. */
export function describeAuditChainContract(harness: StoreHarness): void {
  describe("audit log chain", () => {
    it("keeps every field of a decision and links each entry to the one before it", async () => {
      const store = await openFresh(harness);
      await store.appendAudit(decided);
      await store.appendAudit({ at: 1_700_000_000_001, kind: "approval.decided", tool: "current_time", source: "policy", outcome: "approved" });
      await store.appendAudit({ at: 1_700_000_000_002, kind: "policy.changed", outcome: "widened", detail: "autonomy raised" });

      const log = await wholeLog(store);
      expect(log).toHaveLength(3);
      expectIntactChain(log);
      const { row, seq, prevHash, hash, ...fields } = log[0]!;
      expect(fields).toEqual(decided);
      expect([row < log[1]!.row, seq, prevHash, hash]).toEqual([true, 1, GENESIS_HASH, expect.stringMatching(/^[0-9a-f]{64}$/)]);
      expect((await store.listAudit())[0]).toEqual(decided);
      await store.close();
    });

    it("stores what it hashed: a fractional time and a lone surrogate still verify when read back", async () => {
      const store = await openFresh(harness);
      await store.appendAudit({ at: 1_700_000_000_000.7, kind: "approval.requested", argsSummary: "odd \uD800 text" });
      const log = await wholeLog(store);
      expectIntactChain(log);
      expect(log[0]).toMatchObject({ at: 1_700_000_000_000, argsSummary: "odd \uFFFD text" });
      await store.close();
    });

    it("continues the chain after a restart", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      await before.appendAudit({ at: 1, kind: "approval.requested", tool: "shell" });
      await before.close();
      const after = await harness.open(location);
      await after.appendAudit({ at: 2, kind: "approval.decided", tool: "shell", outcome: "approved" });
      const log = await wholeLog(after);
      expect(log.map((e) => e.seq)).toEqual([1, 2]);
      expectIntactChain(log);
      await after.close();
    });

    it("keeps one unbroken chain when two processes append at the same time", async () => {
      const location = await harness.freshLocation();
      const one = await harness.open(location);
      const two = await harness.open(location);
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 ? one : two).appendAudit({ at: 1_000 + i, kind: "approval.decided", detail: `call ${i}` })),
      );
      const log = await wholeLog(one);
      expect(log).toHaveLength(40);
      expectIntactChain(log);
      expect(new Set(log.map((e) => e.detail)).size).toBe(40);
      await one.close();
      await two.close();
    });

    it("reads the log in pages, oldest first", async () => {
      const store = await openFresh(harness);
      for (let i = 1; i <= 5; i++) await store.appendAudit({ at: i, kind: "approval.decided" });
      const first = await store.readAuditLog({ limit: 2 });
      const next = await store.readAuditLog({ afterRow: first.at(-1)!.row, limit: 2 });
      const rest = await store.readAuditLog({ afterRow: next.at(-1)!.row });
      expect([first, next, rest].map((page) => page.map((e) => e.at))).toEqual([[1, 2], [3, 4], [5]]);
      expect(await store.readAuditLog({ afterRow: rest.at(-1)!.row })).toEqual([]);
      await store.close();
    });
  });
}
