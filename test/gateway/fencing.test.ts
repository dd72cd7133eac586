import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { quietFor } from "../support/bot.ts";
import { startPostgres, type PostgresServer } from "../support/postgres.ts";
import { callTools, heldTool, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";
import { openPostgresCoordination } from "../../src/store/postgres-coordination.ts";

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => server?.stop());

describe("session leases and fencing", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("hands a lapsed lease to another replica with a new token, and the old holder can neither renew nor hold it", async () => {
    const url = await server.createDatabase();
    const a = await openPostgresCoordination(url);
    const b = await openPostgresCoordination(url);
    try {
      const leaseA = (await a.acquire("slack:C1:1.0", 300))!;
      expect(await b.acquire("slack:C1:1.0", 300)).toBeUndefined();
      await quietFor(400);
      const leaseB = (await b.acquire("slack:C1:1.0", 5000))!;
      expect(leaseB.token).toBeGreaterThan(leaseA.token);
      expect(await a.holds(leaseA)).toBe(false);
      expect(await a.renew(leaseA, 5000)).toBe(false);
      expect(await b.holds(leaseB)).toBe(true);
      await a.release(leaseA);
      expect(await b.holds(leaseB)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("drops the stale answer of a replica whose lease was taken over mid-turn: nothing is posted or added to the history", async () => {
    const url = await server.createDatabase();
    const hold = heldTool("slow_step");
    mb = await startMemoryBot({
      tools: [hold.tool],
      configure: (c) => {
        c.databaseUrl = url;
        c.gateway.leaseTtlMs = 60_000;
      },
    });
    routeModel(mb.tb.model, [{ when: "run the slow step", first: callTools({ name: "slow_step" }), then: { text: "the slow step is done" } }]);
    const env = await mb.channel.say("run the slow step");
    await hold.started();
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    // Another replica took the session over (a new owner, a new fencing token).
    await db.query("UPDATE session_leases SET owner = 'replica-b', token = token + 1000");
    hold.release();
    await quietFor(1500);
    expect(mb.texts(env).join("\n")).not.toMatch(/the slow step is done/);
    const history = await db.query("SELECT count(*) AS n FROM messages");
    expect(Number(history.rows[0].n)).toBe(0);
    await db.end();
  });
});
