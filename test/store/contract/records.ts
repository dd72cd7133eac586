/** Contract: audit log, receipts, turn records and named values. */
import { describe, expect, it } from "vitest";
import { VALUE_SOON_MS, type ReceiptRecord, type StoredTurn } from "../../../src/store/store.ts";
import { openFresh, type StoreHarness } from "./harness.ts";

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

function turn(turnId: string, overrides: Partial<StoredTurn> = {}): StoredTurn {
  return {
    turnId, sessionKey: "slack:C1:171.2", channel: "slack", traceId: `trace-${turnId}`, version: 1,
    updatedAt: 1_700_000_000_000, body: JSON.stringify({ v: 1, messages: [], iteration: 0 }), ...overrides,
  };
}

/** Audit, receipt, turn and value behaviours every store must have. */
export function describeRecordsContract(harness: StoreHarness): void {
  describe("audit log", () => {
    it("lists entries oldest first, filtered by session and kind, keeping the newest N under a limit", async () => {
      const store = await openFresh(harness);
      await store.appendAudit({ at: 1, kind: "approval", sessionKey: "s1", tool: "shell", actorId: "U1", actorName: "Ana", source: "backchannel", outcome: "approved" });
      await store.appendAudit({ at: 2, kind: "tool", sessionKey: "s1", tool: "shell", outcome: "ok", traceId: "t1", argsHash: "h", channel: "slack", detail: "exit 0" });
      await store.appendAudit({ at: 3, kind: "approval", sessionKey: "s2", tool: "shell", source: "timeout", outcome: "denied" });
      await store.appendAudit({ at: 4, kind: "approval", sessionKey: "s1", tool: "http", source: "policy", outcome: "approved" });

      expect((await store.listAudit()).map((e) => e.at)).toEqual([1, 2, 3, 4]);
      expect((await store.listAudit({ sessionKey: "s1" })).map((e) => e.at)).toEqual([1, 2, 4]);
      expect((await store.listAudit({ kind: "approval" })).map((e) => e.at)).toEqual([1, 3, 4]);
      expect((await store.listAudit({ sessionKey: "s1", kind: "approval" })).map((e) => e.at)).toEqual([1, 4]);
      expect((await store.listAudit({ kind: "approval", limit: 2 })).map((e) => e.at)).toEqual([3, 4]);
      expect(await store.listAudit({ limit: 0 })).toEqual([]);
      expect((await store.listAudit({ sessionKey: "s1" }))[1]).toEqual({
        at: 2, kind: "tool", sessionKey: "s1", tool: "shell", outcome: "ok", traceId: "t1", argsHash: "h", channel: "slack", detail: "exit 0",
      });
      await store.close();
    });
  });

  describe("receipts", () => {
    it("returns a saved receipt by id after a restart", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      await before.saveReceipts([receipt]);
      await before.saveReceipts([receipt]);
      await before.saveReceipts([]);
      await before.close();
      const store = await harness.open(location);
      expect(await store.getReceipt("r-1")).toEqual(receipt);
      expect(await store.getReceipt("r-2")).toBeUndefined();
      await store.close();
    });

    it("lists every receipt oldest first", async () => {
      const store = await openFresh(harness);
      expect(await store.listReceipts()).toEqual([]);
      const later = { ...receipt, id: "r-0", at: receipt.at + 1 };
      const sameMoment = { ...receipt, id: "r-2" };
      await store.saveReceipts([later, sameMoment]);
      await store.saveReceipts([receipt]);
      expect(await store.listReceipts()).toEqual([receipt, sameMoment, later]);
      await store.close();
    });

    it("takes the same signed receipt from another call (the same execution in the same millisecond) and keeps the first", async () => {
      const store = await openFresh(harness);
      await store.saveReceipts([receipt]);
      await store.saveReceipts([{ ...receipt, sessionKey: "telegram:99", callId: "call-other" }]);
      expect(await store.listReceipts()).toEqual([receipt]);
      await store.close();
    });

    it("refuses to overwrite a receipt with a different one under the same id, and then saves none of the batch", async () => {
      const store = await openFresh(harness);
      await store.saveReceipts([receipt]);
      const other = { ...receipt, id: "r-9" };
      await expect(store.saveReceipts([other, { ...receipt, mac: "forged" }])).rejects.toThrow(/different receipt with id r-1/);
      expect((await store.getReceipt("r-1"))?.mac).toBe(receipt.mac);
      expect(await store.getReceipt("r-9")).toBeUndefined();
      await store.close();
    });
  });

  describe("turn records", () => {
    it("saves, replaces and returns a turn with every field, across a restart", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      await before.saveTurn(turn("t1"));
      const parked = turn("t1", { version: 2, waitingApprovalId: "k3x9", updatedAt: 1_700_000_000_500, body: '{"v":2,"parked":true}' });
      await before.saveTurn(parked);
      await before.close();

      const store = await harness.open(location);
      expect(await store.getTurn("t1")).toEqual(parked);
      expect(await store.getTurn("t2")).toBeUndefined();
      await store.saveTurn(turn("t1", { updatedAt: 1_700_000_000_900 }));
      expect((await store.getTurn("t1"))?.waitingApprovalId).toBeUndefined();
      await store.close();
    });

    it("lists every turn oldest first and forgets a deleted one", async () => {
      const store = await openFresh(harness);
      await store.saveTurn(turn("late", { updatedAt: 3 }));
      await store.saveTurn(turn("b", { updatedAt: 1 }));
      await store.saveTurn(turn("a", { updatedAt: 1 }));
      expect((await store.listTurns()).map((t) => t.turnId)).toEqual(["a", "b", "late"]);
      await store.deleteTurn("b");
      await store.deleteTurn("never-saved");
      expect((await store.listTurns()).map((t) => t.turnId)).toEqual(["a", "late"]);
      await store.close();
    });

    it("saves a turn's record and the receipts of the results it holds in one write", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      const second = { ...receipt, id: "r-2", callId: "call-8" };
      await before.saveTurn(turn("t1"), [receipt, second]);
      await before.close();
      const store = await harness.open(location);
      expect((await store.getTurn("t1"))?.turnId).toBe("t1");
      expect(await store.listReceipts()).toEqual([receipt, second]);
      // A forged receipt under a used id: neither it nor the record is written.
      const replaced = turn("t1", { updatedAt: 1_700_000_000_900, body: '{"v":1,"later":true}' });
      await expect(store.saveTurn(replaced, [{ ...second, id: "r-3" }, { ...receipt, mac: "forged" }])).rejects.toThrow(/different receipt with id r-1/);
      expect((await store.getTurn("t1"))?.updatedAt).toBe(1_700_000_000_000);
      expect(await store.getReceipt("r-3")).toBeUndefined();
      await store.close();
    });

    it("lists the turns of one session only", async () => {
      const store = await openFresh(harness);
      await store.saveTurn(turn("here-2", { updatedAt: 2 }));
      await store.saveTurn(turn("elsewhere", { sessionKey: "slack:C2:9.9", updatedAt: 1 }));
      await store.saveTurn(turn("here-1", { updatedAt: 1 }));
      expect((await store.listTurnsOf("slack:C1:171.2")).map((t) => t.turnId)).toEqual(["here-1", "here-2"]);
      expect((await store.listTurnsOf("slack:C2:9.9")).map((t) => t.turnId)).toEqual(["elsewhere"]);
      expect(await store.listTurnsOf("slack:C3")).toEqual([]);
      await store.close();
    });
  });

  describe("a turn's end", () => {
    const answer = [{ role: "user" as const, content: "deploy it" }, { role: "assistant" as const, content: "deployed" }];

    it("appends the history, deletes the turn's record and sets the mark together, across a restart", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      await before.appendHistory("slack:C1:171.2", [{ role: "user", content: "earlier" }]);
      await before.saveTurn(turn("t1"));
      await before.saveTurn(turn("other"));
      await before.setValue("inflight:trace-t1", '{"at":1}');
      await before.finishTurn({ sessionKey: "slack:C1:171.2", messages: answer, turnId: "t1", mark: { key: "inflight:trace-t1", value: '{"answer":"deployed"}' } });
      expect((await before.loadHistory("slack:C1:171.2", 10)).map((m) => m.content)).toEqual(["earlier", "deploy it", "deployed"]);
      await before.close();

      const store = await harness.open(location);
      expect((await store.loadHistory("slack:C1:171.2", 10)).map((m) => m.content)).toEqual(["earlier", "deploy it", "deployed"]);
      expect((await store.listTurns()).map((t) => t.turnId)).toEqual(["other"]);
      expect(await store.getValue("inflight:trace-t1")).toBe('{"answer":"deployed"}');
      await store.close();
    });

    it("saves the turn's receipts with it, and none of them when it fails", async () => {
      const store = await openFresh(harness);
      await store.saveTurn(turn("t1"));
      const second = { ...receipt, id: "r-2" };
      await store.finishTurn({ sessionKey: "slack:C1:171.2", messages: answer, turnId: "t1", receipts: [receipt, second] });
      expect(await store.listReceipts()).toEqual([receipt, second]);
      expect(await store.listTurns()).toEqual([]);

      await store.saveTurn(turn("t2"));
      await expect(store.finishTurn({ sessionKey: "slack:C1:171.2", messages: answer, turnId: "t2", receipts: [{ ...receipt, id: "r-3" }, { ...second, mac: "forged" }] }))
        .rejects.toThrow(/different receipt with id r-2/);
      expect(await store.getReceipt("r-3")).toBeUndefined();
      expect((await store.listTurns()).map((t) => t.turnId)).toEqual(["t2"]);
      expect(await store.loadHistory("slack:C1:171.2", 10)).toHaveLength(2);
      await store.close();
    });

    it("writes nothing when any part of it fails: the turn is still there to finish", async () => {
      const store = await openFresh(harness);
      await store.saveTurn(turn("t1"));
      await store.setValue("inflight:trace-t1", '{"at":1}');
      // A value the store refuses (NOT NULL), written last: the history and the delete before it must not stay.
      const refused = { key: "inflight:trace-t1", value: null as unknown as string };
      await expect(store.finishTurn({ sessionKey: "slack:C1:171.2", messages: answer, turnId: "t1", mark: refused })).rejects.toThrow();
      expect(await store.loadHistory("slack:C1:171.2", 10)).toEqual([]);
      expect((await store.listTurns()).map((t) => t.turnId)).toEqual(["t1"]);
      expect(await store.getValue("inflight:trace-t1")).toBe('{"at":1}');
      await store.close();
    });

    it("ends a turn that saved no record, and one with no messages, without a mark", async () => {
      const store = await openFresh(harness);
      await store.finishTurn({ sessionKey: "s", messages: answer, turnId: "never-saved" });
      expect((await store.loadHistory("s", 10)).map((m) => m.content)).toEqual(["deploy it", "deployed"]);
      await store.saveTurn(turn("t2", { sessionKey: "s" }));
      await store.finishTurn({ sessionKey: "s", messages: [], turnId: "t2" });
      expect(await store.listTurns()).toEqual([]);
      expect(await store.loadHistory("s", 10)).toHaveLength(2);
      await store.close();
    });
  });

  describe("named values", () => {
    it("stores, overwrites and keeps a value across restarts", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      expect(await before.getValue("telegram.offset")).toBeUndefined();
      await before.setValue("telegram.offset", "100");
      await before.setValue("telegram.offset", "101");
      await before.close();
      const store = await harness.open(location);
      expect(await store.getValue("telegram.offset")).toBe("101");
      await store.close();
    });

    it("writes a value given for soon within the delay, or at close; reads it back at once; a later write or delete wins", async () => {
      const location = await harness.freshLocation();
      const store = await harness.open(location);
      const other = await harness.open(location);
      await store.setValue("gauge:b", "old");
      await store.setValueSoon("gauge:a", "1");
      await store.setValueSoon("gauge:b", "2");
      await store.setValueSoon("gauge:c", "3");
      expect(await store.getValue("gauge:a")).toBe("1");
      expect(await store.listValues("gauge:")).toEqual([{ key: "gauge:a", value: "1" }, { key: "gauge:b", value: "2" }, { key: "gauge:c", value: "3" }]);
      await store.setValue("gauge:b", "later");
      await store.deleteValue("gauge:c");
      // Another process (a replica, the CLI) sees them once the delay is over.
      await new Promise((r) => setTimeout(r, VALUE_SOON_MS + 400));
      expect(await other.listValues("gauge:")).toEqual([{ key: "gauge:a", value: "1" }, { key: "gauge:b", value: "later" }]);
      await store.setValueSoon("gauge:d", "4");
      await store.close();
      expect(await other.getValue("gauge:d")).toBe("4");
      await other.close();
    });

    it("reads several values at once, leaving out the keys that have none, a value given for soon included", async () => {
      const store = await openFresh(harness);
      await store.setValue("compaction:s", "checkpoint");
      await store.setValue("other", "no");
      await store.setValueSoon("context:s", "gauge");
      expect(await store.getValues([])).toEqual(new Map());
      expect(await store.getValues(["compaction:s", "compaction.request:s", "context:s"])).toEqual(new Map([["compaction:s", "checkpoint"], ["context:s", "gauge"]]));
      expect(await store.getValues(["missing"])).toEqual(new Map());
      await store.close();
    });

    it("lists the values under a prefix by key, taking the prefix literally, and deletes one", async () => {
      const store = await openFresh(harness);
      for (const [key, value] of [["mcp.b", "2"], ["mcp.a", "1"], ["mcpx", "no"], ["mcp%", "pct"], ["other", "no"]] as const) {
        await store.setValue(key, value);
      }
      expect(await store.listValues("mcp.")).toEqual([{ key: "mcp.a", value: "1" }, { key: "mcp.b", value: "2" }]);
      expect(await store.listValues("mcp%")).toEqual([{ key: "mcp%", value: "pct" }]);
      await store.deleteValue("mcp.a");
      await store.deleteValue("missing");
      expect((await store.listValues("mcp")).map((v) => v.key)).toEqual(["mcp%", "mcp.b", "mcpx"]);
      await store.close();
    });
  });
}
