import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { eventually, quietFor } from "../support/bot.ts";
import { startPostgres, type PostgresServer } from "../support/postgres.ts";
import { callTools, heldTool, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";
import { openPostgresCoordination } from "../../src/store/postgres-coordination.ts";
import type { Coordination } from "../../src/store/coordination.ts";
import { StaleLeaseError, type ReceiptRecord, type StoredTurn } from "../../src/store/store.ts";
import { openPostgresStore } from "../../src/store/postgres-store.ts";
import { parseEnvelope } from "../../src/envelope.ts";
import type { Config } from "../../src/config/schema.ts";
import type { MemoryChannelOptions } from "../support/memory-channel.ts";

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => server?.stop());

let mb: MemoryBot | undefined;
afterEach(async () => {
  await mb?.close();
  mb = undefined;
});

/**
 * Starts a replica (the memory bot on a fresh PostgreSQL database) and says "run the slow step",
 * whose turn runs `slow_step` until the test releases it; resolves once the tool runs.
 */
async function slowStepOnReplica(options: { configure?: (c: Config) => void; channel?: MemoryChannelOptions } = {}) {
  const url = await server.createDatabase();
  const hold = heldTool("slow_step");
  const bot = await startMemoryBot({
    tools: [hold.tool],
    ...(options.channel ? { channel: options.channel } : {}),
    configure: (c) => {
      c.databaseUrl = url;
      options.configure?.(c);
    },
  });
  mb = bot;
  routeModel(bot.tb.model, [{ when: "run the slow step", first: callTools({ name: "slow_step" }), then: { text: "the slow step is done" } }]);
  const env = await bot.channel.say("run the slow step");
  await hold.started();
  return { url, hold, env, mb: bot };
}

describe("session leases and fencing", () => {
  /** Two replicas' coordination on a fresh database, closed after `run`. */
  async function twoReplicas(run: (a: Coordination, b: Coordination) => Promise<void>): Promise<void> {
    const url = await server.createDatabase();
    const a = await openPostgresCoordination(url);
    const b = await openPostgresCoordination(url);
    try {
      await run(a, b);
    } finally {
      await a.close();
      await b.close();
    }
  }

  it("hands a lapsed lease to another replica with a new token, and the old holder can neither renew nor hold it", async () => {
    await twoReplicas(async (a, b) => {
      const leaseA = (await a.acquire("slack:C1:1.0", 300))!;
      expect(await b.acquire("slack:C1:1.0", 300)).toBeUndefined();
      await quietFor(400);
      const leaseB = (await b.acquire("slack:C1:1.0", 5000))!;
      expect(leaseB.token).toBeGreaterThan(leaseA.token);
      expect(await a.holds(leaseA)).toBe(false);
      expect(await a.renew([leaseA], 5000)).toEqual([]);
      expect(await b.holds(leaseB)).toBe(true);
      await a.release(leaseA);
      expect(await b.holds(leaseB)).toBe(true);
    });
  });

  it("renews all of a replica's leases in one statement, and leaves out the one another replica took over", async () => {
    await twoReplicas(async (a, b) => {
      const short = (await a.acquire("slack:C1:1.0", 300))!;
      const long = (await a.acquire("slack:C1:2.0", 5000))!;
      expect(await a.renew([], 5000)).toEqual([]);
      expect(await a.renew([short, long], 600)).toEqual(expect.arrayContaining([
        { sessionKey: "slack:C1:1.0", token: short.token },
        { sessionKey: "slack:C1:2.0", token: long.token },
      ]));
      expect(await a.renew([long], 5000)).toEqual([{ sessionKey: "slack:C1:2.0", token: long.token }]);
      // Renewed to 600 ms: not for the taking at 400 ms; at 800 ms it lapsed and B takes it.
      await quietFor(400);
      expect(await b.acquire("slack:C1:1.0", 5000)).toBeUndefined();
      await quietFor(400);
      const taken = (await b.acquire("slack:C1:1.0", 5000))!;
      expect(await a.renew([short, long], 5000)).toEqual([{ sessionKey: "slack:C1:2.0", token: long.token }]);
      expect(await b.renew([taken], 5000)).toEqual([{ sessionKey: "slack:C1:1.0", token: taken.token }]);
      expect(await a.holds(long)).toBe(true);
    });
  });

  it("writes a turn's checkpoints and end only under its live lease: nothing of a holder that lost it lands", async () => {
    const url = await server.createDatabase();
    const a = await openPostgresCoordination(url);
    const b = await openPostgresCoordination(url);
    const store = await openPostgresStore({ url });
    try {
      const key = "slack:C1:1.0";
      const turn = (body: string): StoredTurn => ({ turnId: "t1", sessionKey: key, channel: "slack", traceId: "tr1", version: 1, updatedAt: Date.now(), body });
      const receipt = (id: string): ReceiptRecord => ({
        id, at: Date.now(), sessionKey: key, callId: `call-${id}`, tool: "probe", argsCanonical: "{}", outputHash: "0".repeat(64), mac: "1".repeat(64),
      });
      const leaseA = (await a.acquire(key, 300))!;
      await store.saveTurn(turn("first"), [receipt("r1")], leaseA);
      expect((await store.getTurn("t1"))?.body).toBe("first");
      await quietFor(400);
      const leaseB = (await b.acquire(key, 5000))!;

      // A's checkpoint and end after the takeover: refused whole, receipts included.
      await expect(store.saveTurn(turn("stale"), [], leaseA)).rejects.toBeInstanceOf(StaleLeaseError);
      await expect(store.saveTurn(turn("stale"), [receipt("r2")], leaseA)).rejects.toBeInstanceOf(StaleLeaseError);
      const end = { sessionKey: key, messages: [{ role: "assistant" as const, content: "stale answer" }], turnId: "t1", mark: { key: "inflight:tr1", value: "{}" } };
      await expect(store.finishTurn({ ...end, lease: leaseA })).rejects.toBeInstanceOf(StaleLeaseError);
      await expect(store.finishTurn({ ...end, receipts: [receipt("r3")], lease: leaseA })).rejects.toBeInstanceOf(StaleLeaseError);
      expect((await store.getTurn("t1"))?.body).toBe("first");
      expect((await store.listReceipts()).map((r) => r.id)).toEqual(["r1"]);
      expect(await store.loadHistory(key, 10)).toEqual([]);
      expect(await store.getValue("inflight:tr1")).toBeUndefined();

      // B, which holds it now, writes.
      await store.saveTurn(turn("second"), [], leaseB);
      expect((await store.getTurn("t1"))?.body).toBe("second");
      await store.finishTurn({ ...end, messages: [{ role: "assistant", content: "the answer" }], receipts: [receipt("r4")], lease: leaseB });
      expect(await store.loadHistory(key, 10)).toEqual([{ role: "assistant", content: "the answer" }]);
      expect(await store.getTurn("t1")).toBeUndefined();
      expect(await store.getValue("inflight:tr1")).toBe("{}");
      expect((await store.listReceipts()).map((r) => r.id)).toEqual(["r1", "r4"]);
    } finally {
      await store.close();
      await a.close();
      await b.close();
    }
  });

  it("gives a /stop asked from any replica to the replica holding the lease, once, and to no other", async () => {
    await twoReplicas(async (a, b) => {
      const one = (await a.acquire("slack:C1:1.0", 5000))!;
      const two = (await a.acquire("slack:C1:2.0", 5000))!;
      const theirs = (await b.acquire("slack:C2:1.0", 5000))!;
      expect(await a.takeStopRequests()).toEqual([]);
      expect(await b.requestStop("slack:C1:2.0")).toBe(true);
      expect(await b.requestStop("slack:C2:1.0")).toBe(true);
      expect(await b.requestStop("slack:C9:1.0")).toBe(false); // nobody works on it
      expect(await a.takeStopRequests()).toEqual([{ sessionKey: "slack:C1:2.0", token: two.token }]);
      expect(await a.takeStopRequests()).toEqual([]);
      expect(await b.takeStopRequests()).toEqual([{ sessionKey: "slack:C2:1.0", token: theirs.token }]);
      // A lease let go takes its request with it.
      await a.requestStop("slack:C1:1.0");
      await a.release(one);
      expect(await a.takeStopRequests()).toEqual([]);
    });
  });

  it("stops the turn of a session whose lease another replica took over, at the next renewal, and posts nothing of it", async () => {
    const { url, hold, env, mb } = await slowStepOnReplica({ configure: (c) => (c.gateway.leaseTtlMs = 1500) });
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      // Another replica took the session over: a new owner and fencing token, and a lease of its own.
      await db.query("UPDATE session_leases SET owner = 'replica-b', token = token + 1000, expires_at = expires_at + 60000");
      await eventually(() => hold.stops === 1, "the slow step stopped", 3000);
      await quietFor(700);
      expect(mb.texts(env).join("\n")).not.toMatch(/slow step is done|stopped/i);
      expect(mb.tb.model.requests).toHaveLength(1);
      const history = await db.query("SELECT count(*) AS n FROM messages");
      expect(Number(history.rows[0].n)).toBe(0);
    } finally {
      await db.end();
    }
  });

  it("drops the stale answer of a replica whose lease was taken over mid-turn: nothing is posted or added to the history", async () => {
    const { url, hold, env, mb } = await slowStepOnReplica({ configure: (c) => (c.gateway.leaseTtlMs = 60_000) });
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

describe("messages a dead replica accepted and did not finish", () => {
  const sessionKey = "slack:C1:1.0";
  const lost = (at: number) => JSON.stringify({ replyTo: { channel: "slack", conversationId: "C1", threadId: "1.0" }, text: "summarize the incident", at, sessionKey });
  const followUp = parseEnvelope({
    id: "C1:2.0", channel: "slack", conversation: { id: "C1", threadId: "1.0", kind: "channel" }, sender: { id: "U1", isBot: false },
    mentioned: true, text: "and the timeline", replyTo: { channel: "slack", conversationId: "C1", threadId: "1.0" }, receivedAt: Date.now(),
    capabilities: { threads: true, inlineApproval: true, edit: true, typing: true, maxMessageChars: 4000 }, traceId: "t-follow-up",
  });

  it("are left, while a later message waits in their session, to the replica that drains it, which claims them before taking that one", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url });
    const b = await openPostgresCoordination(url);
    try {
      await store.setValue("inflight:t-first", lost(b.now() - 60_000));
      await b.push(followUp, sessionKey, b.now());
      // The sweep leaves it: claimed there and put back later, it could come after the follow-up.
      expect(await b.claimUnfinished(1000, ["slack"])).toEqual([]);
      const lease = (await b.acquire(sessionKey, 5000))!;
      expect((await b.claimUnfinishedOf(lease, 1000)).map((u) => u.traceId)).toEqual(["t-first"]);
    } finally {
      await b.close();
      await store.close();
    }
  });

  it("whose answer is out are left to the replica finishing their status message for a minute after the answer was posted", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url });
    const b = await openPostgresCoordination(url);
    const posted = (at: number) => JSON.stringify({ ...JSON.parse(lost(at)), answer: "the summary", posted: true, progress: "✅ search (0.4s)" });
    try {
      await store.setValue("inflight:t-posting", posted(b.now() - 5_000));
      await store.setValue("inflight:t-left", posted(b.now() - 61_000));
      expect((await b.claimUnfinished(1000, ["slack"])).map((u) => u.traceId)).toEqual(["t-left"]);
      expect(await store.getValue("inflight:t-posting")).toBeDefined();
    } finally {
      await b.close();
      await store.close();
    }
  });

  it("are claimed by any replica's sweep when nothing waits in their session", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url });
    const b = await openPostgresCoordination(url);
    try {
      await store.setValue("inflight:t-first", lost(b.now() - 60_000));
      expect((await b.claimUnfinished(1000, ["slack"])).map((u) => u.traceId)).toEqual(["t-first"]);
      expect(await b.claimUnfinished(1000, ["slack"])).toEqual([]);
    } finally {
      await b.close();
      await store.close();
    }
  });
});

describe("admitting a message", () => {
  const sessionKey = "slack:C9:5.0";
  const envelope = (n: number) => parseEnvelope({
    id: `C9:5.${n}`, channel: "slack", conversation: { id: "C9", threadId: "5.0", kind: "channel" }, sender: { id: "U1", isBot: false },
    mentioned: true, text: `message ${n}`, replyTo: { channel: "slack", conversationId: "C9", threadId: "5.0" }, receivedAt: Date.now(),
    capabilities: { threads: true, inlineApproval: true, edit: true, typing: true, maxMessageChars: 4000 }, traceId: `t-${n}`,
  });
  const mark = (n: number) => ({ key: `inflight:t-${n}`, value: JSON.stringify({ at: n, sessionKey }) });

  it("writes its in-flight mark and inbox entry together, and neither once the session's inbox is full", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url });
    const b = await openPostgresCoordination(url);
    try {
      expect(await b.admit(envelope(1), sessionKey, b.now(), { maxQueued: 2, mark: mark(1) })).toMatchObject({ queued: true, ahead: 0, working: false });
      expect(await b.admit(envelope(2), sessionKey, b.now(), { maxQueued: 2, mark: mark(2) })).toMatchObject({ queued: true, ahead: 1, working: false });
      expect(await b.admit(envelope(3), sessionKey, b.now(), { maxQueued: 2, mark: mark(3) })).toEqual({ queued: false, waiting: 2 });
      expect(await store.getValue("inflight:t-1")).toBe(mark(1).value);
      expect(await store.getValue("inflight:t-2")).toBe(mark(2).value);
      expect(await store.getValue("inflight:t-3")).toBeUndefined();
      expect(await b.waiting(sessionKey)).toBe(2);
      const lease = (await b.acquire(sessionKey, 5000))!;
      expect((await b.take(lease))?.envelope.traceId).toBe("t-1");
    } finally {
      await b.close();
      await store.close();
    }
  });

  it("lets the lease go with the take that finds the inbox empty, and keeps it while there was a message to take", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url });
    const a = await openPostgresCoordination(url);
    const b = await openPostgresCoordination(url);
    try {
      await a.admit(envelope(1), sessionKey, a.now(), { maxQueued: 5, mark: mark(1) });
      const lease = (await a.acquire(sessionKey, 5000))!;
      expect((await a.take(lease, { releaseIfEmpty: true }))?.envelope.traceId).toBe("t-1");
      expect(await b.acquire(sessionKey, 5000)).toBeUndefined();
      expect(await a.take(lease)).toBeUndefined();
      expect(await a.holds(lease)).toBe(true);
      expect(await a.take(lease, { releaseIfEmpty: true })).toBeUndefined();
      expect(await a.holds(lease)).toBe(false);
      // Let go, not lapsed: the next holder takes nothing over.
      expect((await b.acquire(sessionKey, 5000))?.takenOver).toBe(false);
    } finally {
      await a.close();
      await b.close();
      await store.close();
    }
  });

  it("with replicas, tells the sender of a message beyond the thread's queue that it was not queued, and answers the one queued", async () => {
    const { hold, env: first, mb } = await slowStepOnReplica({ configure: (c) => (c.gateway.maxQueuedPerSession = 1) });
    const thread = { threadId: first.replyTo.threadId! };
    const queued = await mb.channel.say("and then the summary", thread);
    await mb.waitFor(queued, "Queued: I'll start on this when the current task here is done");
    const refused = await mb.channel.say("and the timeline too", thread);
    await mb.waitFor(refused, "so I did not queue this one");
    hold.release();
    await mb.waitFor(first, "the slow step is done");
    await mb.waitFor(queued, "answer to: [u-alice] and then the summary");
    await quietFor(500);
    expect(mb.texts(first).filter((t) => t.includes("and the timeline too"))).toEqual([]);
  }, 30_000);

  it("says the session is worked on when a replica holds its lease or a turn of it is saved", async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url });
    const b = await openPostgresCoordination(url);
    try {
      await b.acquire(sessionKey, 5000);
      expect(await b.admit(envelope(1), sessionKey, b.now(), { maxQueued: 10, mark: mark(1) })).toMatchObject({ queued: true, ahead: 0, working: true });
      const other = "slack:C9:6.0";
      await store.saveTurn({ turnId: "tr-1", sessionKey: other, channel: "slack", traceId: "t-0", version: 1, updatedAt: Date.now(), body: "{}" });
      expect(await b.admit(envelope(2), other, b.now(), { maxQueued: 10, mark: mark(2) })).toMatchObject({ queued: true, ahead: 0, working: true });
      expect(await b.admit(envelope(3), "slack:C9:7.0", b.now(), { maxQueued: 10, mark: mark(3) })).toMatchObject({ queued: true, ahead: 0, working: false });
    } finally {
      await b.close();
      await store.close();
    }
  });
});

describe("a replica whose status message's last edit is held back after the answer is out", () => {
  it("finishes it once: no sweep takes the answered message for lost while the edit waits", async () => {
    // Each edit takes the platform 5 s: the answer is out while the summary edit still waits, past the sweeps' 3 s grace.
    const { hold, env, mb } = await slowStepOnReplica({ channel: { editDelayMs: 5000 } });
    hold.release();
    await mb.waitFor(env, "the slow step is done", 20_000);
    const status = mb.channel.messagesIn(env.replyTo.conversationId, env.replyTo.threadId).find((m) => m.text.includes("slow_step"))!;
    await eventually(() => (mb.channel.edits.some((e) => e.messageId === status.id && / step in /.test(e.text)) ? true : undefined), "the summary edit", 20_000);
    await quietFor(6000);
    const summaries = mb.channel.edits.filter((e) => e.messageId === status.id && / step in /.test(e.text));
    expect(summaries).toHaveLength(1);
  }, 60_000);
});
