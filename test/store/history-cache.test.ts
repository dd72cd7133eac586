/**
 * The SQLite store answers history reads from memory (src/store/history-cache.ts). What it
 * returns must always be what the file holds: another process writing the same file (the CLI, a
 * second bot on the same data folder) is seen at once, and what it hands out cannot be changed by
 * a caller, so the next reader gets what the file holds.
 */
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/model/types.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { tempDataDir } from "./temp-dir.ts";

const user = (content: string): ChatMessage => ({ role: "user", content });
const texts = (messages: ChatMessage[]) => messages.map((m) => m.content);

describe("SQLite history read from memory", () => {
  it("sees what another connection to the same file appended and reset", async () => {
    const dataDir = tempDataDir();
    const bot = await openSqliteStore({ dataDir });
    const other = await openSqliteStore({ dataDir });
    await bot.appendHistory("s", [user("one")]);
    expect(texts(await bot.loadHistory("s", 10))).toEqual(["one"]);

    await other.appendHistory("s", [user("two")]);
    expect(texts(await bot.loadHistory("s", 10))).toEqual(["one", "two"]);

    await other.resetSession("s");
    expect(await bot.loadHistory("s", 10)).toEqual([]);
    await other.appendHistory("s", [user("fresh")]);
    expect(texts(await bot.loadHistory("s", 10))).toEqual(["fresh"]);
    await bot.close();
    await other.close();
  });

  it("keeps its own appends and resets in step, and hands out messages nobody can change", async () => {
    const dataDir = tempDataDir();
    const store = await openSqliteStore({ dataDir });
    for (let i = 1; i <= 5; i++) await store.appendHistory("s", [user(`m${i}`)]);
    expect(texts(await store.loadHistory("s", 3))).toEqual(["m3", "m4", "m5"]);
    expect(texts(await store.loadHistory("s", 10))).toEqual(["m1", "m2", "m3", "m4", "m5"]);

    // What it hands out cannot be changed (a caller that tries is told at once), and its array is the caller's own.
    const got = await store.loadHistory("s", 10);
    expect(() => {
      got[0]!.content = "changed by the caller";
    }).toThrow(TypeError);
    got.pop();
    expect(texts(await store.loadHistory("s", 10))).toEqual(["m1", "m2", "m3", "m4", "m5"]);
    // The next load hands out the same messages, so what a turn worked out about one holds for the next.
    expect((await store.loadHistory("s", 10))[0]).toBe((await store.loadHistory("s", 10))[0]);

    await store.appendHistory("s", [user("m6"), user("m7")]);
    expect(texts(await store.loadHistory("s", 2))).toEqual(["m6", "m7"]);
    await store.resetSession("s");
    expect(await store.loadHistory("s", 10)).toEqual([]);
    await store.appendHistory("s", [user("after /new")]);
    expect(texts(await store.loadHistory("s", 10))).toEqual(["after /new"]);
    await store.close();

    // What a fresh process reads from the file is the same.
    const again = await openSqliteStore({ dataDir });
    expect(texts(await again.loadHistory("s", 10))).toEqual(["after /new"]);
    await again.close();
  });

  it("reads the latest messages from the file when it held only some of them", async () => {
    const dataDir = tempDataDir();
    const writer = await openSqliteStore({ dataDir });
    for (let i = 1; i <= 6; i++) await writer.appendHistory("s", [user(`m${i}`)]);
    await writer.close();
    const store = await openSqliteStore({ dataDir });
    expect(texts(await store.loadHistory("s", 2))).toEqual(["m5", "m6"]);
    await store.appendHistory("s", [user("m7")]);
    expect(texts(await store.loadHistory("s", 5))).toEqual(["m3", "m4", "m5", "m6", "m7"]);
    await store.close();
  });
});
