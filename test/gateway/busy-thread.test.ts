import { afterEach, describe, expect, it } from "vitest";
import { callTools, heldTool, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

describe("a thread whose first answer is not out yet", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("takes unmentioned follow-ups and commands there, and coalesces the queued notices of a burst", async () => {
    const hold = heldTool("slowjob");
    // A paced channel (like Slack's one message a second per thread), so that notices pile up.
    mb = await startMemoryBot({ tools: [hold.tool], channel: { channel: "slack", minIntervalMs: 300 } });
    routeModel(mb.tb.model, [{ when: "start the slow job", first: callTools({ name: "slowjob" }), then: { text: "slow job done" } }]);
    const first = await mb.channel.say("start the slow job", { mentioned: true });
    const thread = first.conversation.threadId!;
    await hold.started();
    await mb.channel.say("/status", { mentioned: false, threadId: thread });
    await mb.waitFor(first, "Working for");
    for (let i = 0; i < 4; i++) await mb.channel.say(`follow-up ${i}`, { mentioned: false, threadId: thread });
    await mb.waitFor(first, "done. (×");
    hold.release();
    await mb.waitFor(first, "follow-up 3", 10_000);
    const queuedPosts = mb.texts(first).filter((t) => t.includes("Queued"));
    expect(queuedPosts.length).toBeLessThan(4);
  });

  it("answers an empty message instead of starting a turn", async () => {
    mb = await startMemoryBot();
    const env = await mb.channel.say("   ");
    await mb.waitFor(env, "empty message");
    expect(mb.tb.model.requests).toHaveLength(0);
  });

  it("says there is nothing to forget on /new in a conversation without history", async () => {
    mb = await startMemoryBot();
    const env = await mb.channel.say("/new");
    await mb.waitFor(env, "no earlier conversation here to forget");
  });
});
