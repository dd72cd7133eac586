import { afterEach, describe, expect, it } from "vitest";
import { callTools, heldTool, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";
import { eventually, quietFor } from "../support/bot.ts";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { DATABASE_FILE } from "../../src/store/sqlite-store.ts";

describe("shutdown", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close().catch(() => {});
    mb = undefined;
  });

  /** A turn running a tool that holds, and a second message in its thread queued behind it. */
  async function longJobWithQueuedMessage() {
    const hold = heldTool("longjob");
    mb = await startMemoryBot({ tools: [hold.tool], configure: (c) => void (c.gateway.shutdownGraceMs = 300) });
    routeModel(mb.tb.model, [{ when: "start the long job", first: callTools({ name: "longjob" }), then: { text: "long job done" } }]);
    const first = await mb.channel.say("start the long job");
    await hold.started();
    const second = await mb.channel.say("and then this", { threadId: first.conversation.threadId });
    await mb.waitFor(second, "Queued");
    return { hold, first, second };
  }

  it("keeps the running turn and the queued message for after the restart, and answers both in order", async () => {
    const { hold, first, second } = await longJobWithQueuedMessage();
    const m = mb!;

    const started = Date.now();
    await m.tb.bot.stop();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(hold.starts).toBe(1);
    expect(m.texts(first).join("\n")).not.toMatch(/long job done|Stopped|stopped this task/);
    expect(m.texts(second).join("\n")).toMatch(/I'm restarting; I'll answer this as soon as I'm back/);

    await m.tb.restart();
    const done = await m.waitFor(first, "long job done");
    const answered = await m.waitFor(second, "answer to: [u-alice] and then this");
    expect(m.channel.messages.indexOf(done)).toBeLessThan(m.channel.messages.indexOf(answered));
    expect(m.texts(second).join("\n")).not.toMatch(/send it again|was not finished/);
    await quietFor(300);
    expect(m.texts(second).filter((t) => t.includes("and then this"))).toHaveLength(1);
    expect(await m.tb.bot.store.listValues("inflight:")).toEqual([]);
  });

  it("keeps a message that arrives while shutting down, and answers it after the restart", async () => {
    const { first } = await longJobWithQueuedMessage();
    const m = mb!;
    const stopping = m.tb.bot.stop();
    const late = await m.channel.say("one more thing", { conversationId: "room-late" });
    const command = await m.channel.say("/status", { conversationId: "room-late", threadId: "late-2" });
    await stopping;
    expect(m.texts(late).join("\n")).toMatch(/I'll answer this as soon as I'm back/);
    expect(m.texts(command).join("\n")).toMatch(/please send that again/);

    await m.tb.restart();
    await m.waitFor(first, "long job done");
    await m.waitFor(late, "answer to: [u-alice] one more thing");
  });

  it("asks the access lists again before it runs a kept message: a sender the restart took off them is refused", async () => {
    const hold = heldTool("longjob");
    let allowed = ["*"];
    mb = await startMemoryBot({
      tools: [hold.tool], channel: { channel: "slack" },
      configure: (c) => {
        c.gateway.shutdownGraceMs = 300;
        c.slack.access.users = allowed;
        c.slack.access.mentionGate = false;
      },
    });
    const m = mb;
    routeModel(m.tb.model, [{ when: "start the long job", first: callTools({ name: "longjob" }), then: { text: "long job done" } }]);
    const first = await m.channel.say("start the long job", { userId: "U-ANN" });
    await hold.started();
    const second = await m.channel.say("and then this", { threadId: first.conversation.threadId, userId: "U-BOB" });
    await m.waitFor(second, "Queued");
    await m.tb.bot.stop();
    expect(m.texts(second).join("\n")).toMatch(/I'll answer this as soon as I'm back/);

    allowed = ["U-ANN"];
    await m.tb.restart();
    await m.waitFor(first, "long job done");
    await eventually(async () => (await m.tb.bot.store.listValues("inflight:")).length === 0 || undefined, "the kept message dropped");
    await quietFor(300);
    expect(m.texts(second).join("\n")).not.toMatch(/and then this/);
  });

  it("reports a kept message whose record cannot be read back as not finished, instead of running it", async () => {
    const { first, second } = await longJobWithQueuedMessage();
    const m = mb!;
    await m.tb.bot.stop();

    const db = new DatabaseSync(path.join(m.tb.dataDir, DATABASE_FILE));
    const rows = db.prepare("SELECT key, value FROM kv WHERE key LIKE 'inflight:%'").all() as Array<{ key: string; value: string }>;
    const row = rows.find((r) => (JSON.parse(r.value) as { deferred?: boolean }).deferred)!;
    expect(row).toBeDefined();
    const record = JSON.parse(row.value) as { deferred?: boolean; envelope?: { text?: unknown } };
    record.envelope!.text = 42;
    db.prepare("UPDATE kv SET value = ? WHERE key = ?").run(JSON.stringify(record), row.key);
    db.close();

    await m.tb.restart();
    await m.waitFor(second, "so it was not finished. Please send it again");
    await m.waitFor(first, "long job done");
    await quietFor(300);
    expect(m.texts(second).join("\n")).not.toMatch(/answer to:/);
  });
});

describe("a restart after a turn's record is damaged", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close().catch(() => {});
    mb = undefined;
  });

  it("reports its message as not finished and never starts it over (its tools may have run)", async () => {
    const hold = heldTool("longjob");
    mb = await startMemoryBot({ tools: [hold.tool], configure: (c) => void (c.gateway.shutdownGraceMs = 300) });
    const m = mb;
    routeModel(m.tb.model, [{ when: "start the long job", first: callTools({ name: "longjob" }), then: { text: "long job done" } }]);
    const first = await m.channel.say("start the long job");
    await hold.started();
    await m.tb.bot.stop();
    const asked = m.tb.model.requests.length;

    const db = new DatabaseSync(path.join(m.tb.dataDir, DATABASE_FILE));
    expect(db.prepare("UPDATE turns SET body = '{\"version\":1' ").run().changes).toBe(1);
    db.close();

    await m.tb.restart();
    await m.waitFor(first, "so it was not finished. Please send it again");
    await quietFor(300);
    expect(hold.starts).toBe(1);
    expect(m.tb.model.requests.length).toBe(asked);
    expect(m.texts(first).join("\n")).not.toMatch(/long job done|starting it over/);
    expect(await m.tb.bot.store.listValues("inflight:")).toEqual([]);
  });
});
