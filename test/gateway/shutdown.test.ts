import { afterEach, describe, expect, it } from "vitest";
import { callTools, heldTool, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";
import { quietFor } from "../support/bot.ts";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { DATABASE_FILE } from "../../src/store/sqlite-store.ts";

describe("shutdown", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close().catch(() => {});
    mb = undefined;
  });

  it("keeps the running turn and the queued message for after the restart, and answers both in order", async () => {
    const hold = heldTool("longjob");
    mb = await startMemoryBot({ tools: [hold.tool], configure: (c) => void (c.gateway.shutdownGraceMs = 300) });
    routeModel(mb.tb.model, [{ when: "start the long job", first: callTools({ name: "longjob" }), then: { text: "long job done" } }]);
    const first = await mb.channel.say("start the long job");
    await hold.started();
    const second = await mb.channel.say("and then this", { threadId: first.conversation.threadId });
    await mb.waitFor(second, "Queued");

    const started = Date.now();
    await mb.tb.bot.stop();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(hold.starts).toBe(1);
    expect(mb.texts(first).join("\n")).not.toMatch(/long job done|Stopped|stopped this task/);
    expect(mb.texts(second).join("\n")).toMatch(/I'm restarting; I'll answer this as soon as I'm back/);

    await mb.tb.restart();
    const done = await mb.waitFor(first, "long job done");
    const answered = await mb.waitFor(second, "answer to: [u-alice] and then this");
    expect(mb.channel.messages.indexOf(done)).toBeLessThan(mb.channel.messages.indexOf(answered));
    expect(mb.texts(second).join("\n")).not.toMatch(/send it again|was not finished/);
    await quietFor(300);
    expect(mb.texts(second).filter((t) => t.includes("and then this"))).toHaveLength(1);
    expect(await mb.tb.bot.store.listValues("inflight:")).toEqual([]);
  });

  it("reports a kept message whose record cannot be read back as not finished, instead of running it", async () => {
    const hold = heldTool("longjob");
    mb = await startMemoryBot({ tools: [hold.tool], configure: (c) => void (c.gateway.shutdownGraceMs = 300) });
    routeModel(mb.tb.model, [{ when: "start the long job", first: callTools({ name: "longjob" }), then: { text: "long job done" } }]);
    const first = await mb.channel.say("start the long job");
    await hold.started();
    const second = await mb.channel.say("and then this", { threadId: first.conversation.threadId });
    await mb.waitFor(second, "Queued");
    await mb.tb.bot.stop();

    const db = new DatabaseSync(path.join(mb.tb.dataDir, DATABASE_FILE));
    const rows = db.prepare("SELECT key, value FROM kv WHERE key LIKE 'inflight:%'").all() as Array<{ key: string; value: string }>;
    const row = rows.find((r) => (JSON.parse(r.value) as { deferred?: boolean }).deferred)!;
    expect(row).toBeDefined();
    const record = JSON.parse(row.value) as { deferred?: boolean; envelope?: { text?: unknown } };
    record.envelope!.text = 42;
    db.prepare("UPDATE kv SET value = ? WHERE key = ?").run(JSON.stringify(record), row.key);
    db.close();

    await mb.tb.restart();
    await mb.waitFor(second, "so it was not finished. Please send it again");
    await mb.waitFor(first, "long job done");
    await quietFor(300);
    expect(mb.texts(second).join("\n")).not.toMatch(/answer to:/);
  });
});
