import { afterEach, describe, expect, it } from "vitest";
import { callTools, heldTool, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";
import { eventually } from "../support/bot.ts";
import { sessionKeyOf } from "../../src/envelope.ts";
import { INFLIGHT } from "../../src/gateway/inflight.ts";

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

  it("posts no queued notice for a follow-up whose turn started at once (the thread freed while it was being recorded)", async () => {
    const hold = heldTool("slowjob");
    mb = await startMemoryBot({ tools: [hold.tool] });
    routeModel(mb.tb.model, [{ when: "start the slow job", first: callTools({ name: "slowjob" }), then: { text: "slow job done" } }]);
    const first = await mb.channel.say("start the slow job", { mentioned: true });
    await hold.started();
    // The follow-up arrives while the thread is busy; the first turn ends while the follow-up is
    // being recorded, so its turn starts the moment it is queued.
    const store = mb.tb.bot.store;
    const setValue = store.setValue.bind(store);
    let freed = false;
    store.setValue = async (key, value) => {
      if (key.startsWith(INFLIGHT) && !freed) {
        freed = true;
        hold.release();
        await mb!.waitFor(first, "slow job done");
        await eventually(() => !mb!.tb.bot.gateway.lanes.busy(sessionKeyOf(first)) || undefined, "the thread to be free");
      }
      return setValue(key, value);
    };
    const followUp = await mb.channel.say("what now", { mentioned: false, threadId: first.conversation.threadId });
    await mb.waitFor(followUp, "] what now");
    expect(freed).toBe(true);
    // Longer than the notice's delay (1.5 s): it would have been posted by now.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(mb.texts(first).filter((t) => t.includes("Queued"))).toEqual([]);
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
