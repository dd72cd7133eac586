/** Contract: session history (append, load, reset, list). */
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../src/model/types.ts";
import { openFresh, type StoreHarness } from "./harness.ts";

const user = (content: string): ChatMessage => ({ role: "user", content });

/** History behaviours every store must have. */
export function describeHistoryContract(harness: StoreHarness): void {
  describe("session history", () => {
    it("keeps history, every message shape intact, across closing and reopening", async () => {
      const location = await harness.freshLocation();
      const conversation: ChatMessage[] = [
        { role: "system", content: "be brief" },
        { role: "user", content: "list files", name: "ana" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: '{"path":"."}' } }],
        },
        { role: "tool", tool_call_id: "c1", content: "a.txt\nb.txt" },
        { role: "assistant", content: "Two files: a.txt and b.txt. ✅ «ünïcode»" },
      ];
      const first = await harness.open(location);
      await first.appendHistory("slack:C1:171.2", conversation.slice(0, 2));
      await first.appendHistory("slack:C1:171.2", conversation.slice(2));
      await first.close();

      const second = await harness.open(location);
      expect(await second.loadHistory("slack:C1:171.2", 50)).toEqual(conversation);
      await second.close();
    });

    it("loads only the newest N messages, oldest first", async () => {
      const store = await openFresh(harness);
      await store.appendHistory("s", Array.from({ length: 10 }, (_, i) => user(`m${i}`)));
      const last3 = await store.loadHistory("s", 3);
      expect(last3.map((m) => m.content)).toEqual(["m7", "m8", "m9"]);
      expect(await store.loadHistory("s", 0)).toEqual([]);
      expect(await store.loadHistory("s", -1)).toEqual([]);
      await store.close();
    });

    it("keeps the order of a long append (more messages than one statement takes) and of a turn's end after it", async () => {
      const store = await openFresh(harness);
      const messages = Array.from({ length: 37 }, (_, i) => user(`m${i}`));
      await store.appendHistory("s", messages);
      await store.finishTurn({ sessionKey: "s", messages: [user("last-a"), user("last-b")], turnId: "t-none", checkpointed: false });
      expect((await store.loadHistory("s", 100)).map((m) => m.content)).toEqual([...messages.map((m) => m.content), "last-a", "last-b"]);
      await store.close();
    });

    it("ignores an empty append", async () => {
      const store = await openFresh(harness);
      await store.appendHistory("s", []);
      expect(await store.listSessions()).toEqual([]);
      await store.close();
    });

    it("keeps each session's history apart", async () => {
      const store = await openFresh(harness);
      await store.appendHistory("telegram:1", [user("one")]);
      await store.appendHistory("telegram:2", [user("two")]);
      expect(await store.loadHistory("telegram:1", 10)).toEqual([user("one")]);
      expect(await store.loadHistory("unknown", 10)).toEqual([]);
      await store.close();
    });

    it("keeps the messages of concurrent appends to one session in whole batches", async () => {
      const store = await openFresh(harness);
      const batch = (b: number) => Array.from({ length: 5 }, (_, i) => user(`b${b}-${i}`));
      await Promise.all(Array.from({ length: 8 }, (_, b) => store.appendHistory("s", batch(b))));
      const contents = (await store.loadHistory("s", 100)).map((m) => m.content as string);
      expect(contents).toHaveLength(40);
      for (let i = 0; i < 40; i += 5) {
        const b = contents[i]!.split("-")[0];
        expect(contents.slice(i, i + 5)).toEqual([0, 1, 2, 3, 4].map((n) => `${b}-${n}`));
      }
      await store.close();
    });

    it("starts an empty history after resetSession and never loads the old messages again", async () => {
      const location = await harness.freshLocation();
      const store = await harness.open(location);
      await store.appendHistory("s", [user("old secret plan")]);
      await store.resetSession("s");
      expect(await store.loadHistory("s", 50)).toEqual([]);
      await store.appendHistory("s", [user("fresh start")]);
      await store.resetSession("never-seen");
      await store.close();

      const reopened = await harness.open(location);
      expect(await reopened.loadHistory("s", 50)).toEqual([user("fresh start")]);
      expect((await reopened.listSessions()).map((s) => s.key)).toEqual(["s"]);
      await reopened.close();
    });

    it("lists sessions most recently active first, counting only current messages", async () => {
      let clock = 1_000;
      const store = await openFresh(harness, { now: () => clock });
      await store.appendHistory("a", [user("1"), user("2")]);
      clock = 2_000;
      await store.appendHistory("b", [user("1")]);
      clock = 3_000;
      await store.resetSession("a");
      await store.appendHistory("a", [user("3")]);

      expect(await store.listSessions()).toEqual([
        { key: "a", createdAt: 1_000, updatedAt: 3_000, messageCount: 1 },
        { key: "b", createdAt: 2_000, updatedAt: 2_000, messageCount: 1 },
      ]);
      expect((await store.listSessions(1)).map((s) => s.key)).toEqual(["a"]);
      expect(await store.listSessions(0)).toEqual([]);
      await store.close();
    });

    it("orders sessions active at the same moment by key, byte for byte", async () => {
      const store = await openFresh(harness, { now: () => 5 });
      for (const key of ["b", "B", "a", "_x"]) await store.appendHistory(key, [user("hi")]);
      expect((await store.listSessions()).map((s) => s.key)).toEqual(["B", "_x", "a", "b"]);
      await store.close();
    });

    it("loads the whole current history when the limit is Number.MAX_SAFE_INTEGER", async () => {
      const store = await openFresh(harness);
      await store.appendHistory("s", Array.from({ length: 30 }, (_, i) => user(`m${i}`)));
      const all = await store.loadHistory("s", Number.MAX_SAFE_INTEGER);
      expect(all.map((m) => m.content)).toEqual(Array.from({ length: 30 }, (_, i) => `m${i}`));
      await store.close();
    });

    it("imports a session with its own times and history, which then loads and grows like any other", async () => {
      const location = await harness.freshLocation();
      const store = await harness.open(location, { now: () => 9_000 });
      const history: ChatMessage[] = [
        user("deploy please"),
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: '{"command":"make deploy"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "done" },
      ];
      await store.importSession({ key: "slack:C1:171.2", createdAt: 1_700_000_000_000, updatedAt: 1_700_000_500_000 }, history);
      await store.importSession({ key: "telegram:7", createdAt: 2_000, updatedAt: 3_000 }, []);
      await store.close();

      const reopened = await harness.open(location, { now: () => 9_000 });
      expect(await reopened.listSessions()).toEqual([
        { key: "slack:C1:171.2", createdAt: 1_700_000_000_000, updatedAt: 1_700_000_500_000, messageCount: 3 },
        { key: "telegram:7", createdAt: 2_000, updatedAt: 3_000, messageCount: 0 },
      ]);
      expect(await reopened.loadHistory("slack:C1:171.2", 50)).toEqual(history);
      await reopened.appendHistory("slack:C1:171.2", [user("thanks")]);
      expect((await reopened.loadHistory("slack:C1:171.2", 50)).map((m) => m.content)).toEqual(["deploy please", null, "done", "thanks"]);
      await reopened.close();
    });

    it("refuses to import a session that is already stored, and leaves it as it was", async () => {
      const store = await openFresh(harness, { now: () => 1_000 });
      await store.appendHistory("s", [user("mine")]);
      await expect(store.importSession({ key: "s", createdAt: 5, updatedAt: 6 }, [user("theirs")])).rejects.toThrow(
        /session with key s is already stored/,
      );
      expect(await store.loadHistory("s", 50)).toEqual([user("mine")]);
      expect(await store.listSessions()).toEqual([{ key: "s", createdAt: 1_000, updatedAt: 1_000, messageCount: 1 }]);
      await store.close();
    });

    it("keeps timestamps beyond 32 bits exactly", async () => {
      const store = await openFresh(harness, { now: () => 1_799_999_999_999 });
      await store.appendHistory("s", [user("late")]);
      expect((await store.listSessions())[0]).toMatchObject({ createdAt: 1_799_999_999_999, updatedAt: 1_799_999_999_999 });
      await store.close();
    });
  });
}
