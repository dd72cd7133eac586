import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { tempDataDir } from "./temp-dir.ts";

const TTL = 10 * 60_000;

describe("inbound dedupe (markSeen)", () => {
  it("handles an event the first time, skips redeliveries within the TTL, and handles it again after expiry", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    expect(await store.markSeen("slack", "Ev1", TTL, 0)).toBe(true);
    expect(await store.markSeen("slack", "Ev1", TTL, 1_000)).toBe(false);
    expect(await store.markSeen("slack", "Ev1", TTL, TTL - 1)).toBe(false);
    expect(await store.markSeen("slack", "Ev1", TTL, TTL)).toBe(true);
    expect(await store.markSeen("slack", "Ev1", TTL, TTL + 1)).toBe(false);
    await store.close();
  });

  it("does not extend the TTL when a redelivery is skipped", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    await store.markSeen("telegram", "42", 1_000, 0);
    expect(await store.markSeen("telegram", "42", 1_000, 900)).toBe(false);
    expect(await store.markSeen("telegram", "42", 1_000, 1_000)).toBe(true);
    await store.close();
  });

  it("treats the same event id on different channels as different events", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    expect(await store.markSeen("discord", "123", TTL, 0)).toBe(true);
    expect(await store.markSeen("telegram", "123", TTL, 0)).toBe(true);
    await store.close();
  });

  it("still skips a redelivery after a restart", async () => {
    const dataDir = tempDataDir();
    const before = await openSqliteStore({ dataDir });
    expect(await before.markSeen("telegram", "update-7", TTL, 5_000)).toBe(true);
    await before.close();

    const after = await openSqliteStore({ dataDir });
    expect(await after.markSeen("telegram", "update-7", TTL, 6_000)).toBe(false);
    expect(await after.markSeen("telegram", "update-7", TTL, 5_000 + TTL)).toBe(true);
    await after.close();
  });

  it("deletes expired event ids so the dedupe table does not grow without bound", async () => {
    const dataDir = tempDataDir();
    const store = await openSqliteStore({ dataDir });
    for (let i = 0; i < 20; i++) await store.markSeen("slack", `old-${i}`, 1_000, 0);
    await store.markSeen("slack", "new", TTL, 3_600_000);
    await store.close();

    const db = new DatabaseSync(join(dataDir, "gatehouse.db"), { readOnly: true });
    const rows = db.prepare("SELECT event_id FROM seen_events").all();
    db.close();
    expect(rows.map((r) => r.event_id)).toEqual(["new"]);
  });
});
