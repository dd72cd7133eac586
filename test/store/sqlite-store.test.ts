import { statSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { openStore, storeKind } from "../../src/store/open-store.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { pending } from "./contract/index.ts";
import { tempDataDir } from "./temp-dir.ts";

describe("SQLite store", () => {
  it("creates the data folder, private to its owner, with gatehouse.db inside", async () => {
    const dataDir = tempDataDir();
    const store = await openSqliteStore({ dataDir });
    await store.close();
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, "gatehouse.db")).isFile()).toBe(true);
    expect(statSync(join(dataDir, "gatehouse.db")).mode & 0o777).toBe(0o600);
  });

  it("is what openStore opens when no database URL is given", async () => {
    const dataDir = tempDataDir();
    expect(storeKind({ databaseUrl: "  " })).toBe("sqlite");
    const store = await openStore({ dataDir, databaseUrl: "" });
    await store.setValue("k", "v");
    await store.close();
    const again = await openSqliteStore({ dataDir });
    expect(await again.getValue("k")).toBe("v");
    await again.close();
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

  it("deletes expired event ids so the dedupe table does not grow without bound", async () => {
    const dataDir = tempDataDir();
    const store = await openSqliteStore({ dataDir });
    for (let i = 0; i < 20; i++) await store.markSeen("slack", `old-${i}`, 1_000, 0);
    await store.markSeen("slack", "new", 10 * 60_000, 3_600_000);
    await store.close();

    const db = new DatabaseSync(join(dataDir, "gatehouse.db"), { readOnly: true });
    const rows = db.prepare("SELECT event_id FROM seen_events").all();
    db.close();
    expect(rows.map((r) => r.event_id)).toEqual(["new"]);
  });

  describe("writes made at the same moment (group commit)", () => {
    it("commits them in one transaction, each call settling once its write is on disk", async () => {
      const dataDir = tempDataDir();
      const store = await openSqliteStore({ dataDir });
      await store.setValue("warm", "up");
      // Each commit appends the pages it changed to the write-ahead log: one commit, a few pages;
      // fifty commits, fifty times the pages they touch.
      const wal = () => statSync(join(dataDir, "gatehouse.db-wal")).size;
      const before = wal();
      const writes = Array.from({ length: 50 }, (_, i) =>
        i % 2 ? store.setValue(`inflight:${i}`, `v${i}`) : store.markSeen("telegram", `u${i}`, 60_000),
      );
      const outcomes = await Promise.all(writes);
      expect(outcomes.filter((o) => o === true)).toHaveLength(25);
      expect(wal() - before).toBeLessThan(6 * 4120);
      const other = new DatabaseSync(join(dataDir, "gatehouse.db"), { readOnly: true });
      expect((other.prepare("SELECT count(*) AS n FROM kv WHERE key LIKE 'inflight:%'").get() as { n: number }).n).toBe(25);
      other.close();
      await store.close();
    });

    it("reads a queued write at once, in the order the calls were made", async () => {
      const store = await openSqliteStore({ dataDir: tempDataDir() });
      const first = store.setValue("k", "first");
      const second = store.setValue("k", "second");
      const deleted = store.deleteValue("gone");
      expect(await store.getValue("k")).toBe("second");
      await Promise.all([first, second, deleted]);
      expect(await store.markSeen("slack", "e1", 60_000)).toBe(true);
      const again = store.markSeen("slack", "e1", 60_000);
      expect(await again).toBe(false);
      await store.close();
    });

    it("fails only the write whose statement fails; the others of its transaction are kept", async () => {
      const dataDir = tempDataDir();
      const store = await openSqliteStore({ dataDir });
      const good = store.setValue("good", "kept");
      // A value must not be null.
      const bad = store.setValue("bad", null as unknown as string);
      const alsoGood = store.setValue("also", "kept");
      await expect(bad).rejects.toThrow(/NOT NULL/);
      await Promise.all([good, alsoGood]);
      await store.close();
      const again = await openSqliteStore({ dataDir });
      expect(await again.getValues(["good", "bad", "also"])).toEqual(new Map([["good", "kept"], ["also", "kept"]]));
      await again.close();
    });

    it("commits what is queued when the store closes", async () => {
      const dataDir = tempDataDir();
      const store = await openSqliteStore({ dataDir });
      const write = store.setValue("late", "written");
      await store.close();
      await write;
      const again = await openSqliteStore({ dataDir });
      expect(await again.getValue("late")).toBe("written");
      await again.close();
    });
  });
});
