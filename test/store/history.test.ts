import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/model/types.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { tempDataDir } from "./temp-dir.ts";

const user = (content: string): ChatMessage => ({ role: "user", content });

describe("session history", () => {
  it("creates the data folder, private to its owner, with gatehouse.db inside", async () => {
    const dataDir = tempDataDir();
    const store = await openSqliteStore({ dataDir });
    await store.close();
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, "gatehouse.db")).isFile()).toBe(true);
  });

  it("keeps history across closing and reopening the same data folder", async () => {
    const dataDir = tempDataDir();
    const conversation: ChatMessage[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: "list files", name: "ana" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: '{"path":"."}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: "a.txt\nb.txt" },
      { role: "assistant", content: "Two files: a.txt and b.txt." },
    ];
    const first = await openSqliteStore({ dataDir });
    await first.appendHistory("slack:C1:171.2", conversation.slice(0, 2));
    await first.appendHistory("slack:C1:171.2", conversation.slice(2));
    await first.close();

    const second = await openSqliteStore({ dataDir });
    expect(await second.loadHistory("slack:C1:171.2", 50)).toEqual(conversation);
    await second.close();
  });

  it("loads only the newest N messages, oldest first", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    await store.appendHistory("s", Array.from({ length: 10 }, (_, i) => user(`m${i}`)));
    const last3 = await store.loadHistory("s", 3);
    expect(last3.map((m) => m.content)).toEqual(["m7", "m8", "m9"]);
    expect(await store.loadHistory("s", 0)).toEqual([]);
    await store.close();
  });

  it("keeps each session's history apart", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    await store.appendHistory("telegram:1", [user("one")]);
    await store.appendHistory("telegram:2", [user("two")]);
    expect(await store.loadHistory("telegram:1", 10)).toEqual([user("one")]);
    expect(await store.loadHistory("unknown", 10)).toEqual([]);
    await store.close();
  });

  it("starts an empty history after resetSession and never loads the old messages again", async () => {
    const dataDir = tempDataDir();
    const store = await openSqliteStore({ dataDir });
    await store.appendHistory("s", [user("old secret plan")]);
    await store.resetSession("s");
    expect(await store.loadHistory("s", 50)).toEqual([]);
    await store.appendHistory("s", [user("fresh start")]);
    await store.close();

    const reopened = await openSqliteStore({ dataDir });
    expect(await reopened.loadHistory("s", 50)).toEqual([user("fresh start")]);
    await reopened.close();
  });

  it("lists sessions most recently active first, counting only current messages", async () => {
    let clock = 1_000;
    const store = await openSqliteStore({ path: ":memory:", now: () => clock });
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
    await store.close();
  });
});
