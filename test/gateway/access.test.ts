import { afterEach, describe, expect, it } from "vitest";
import { MemoryChannel, MEMORY_ROOM } from "../support/memory-channel.ts";
import { startTestBot } from "../support/bot.ts";
import { REFUSAL_TEXT } from "../../src/gateway/access.ts";
import { quietFor } from "../support/bot.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";
import { waitUntil } from "../support/wait.ts";

describe("gateway access", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  /** A memory channel standing in for Slack, so the bot applies config.slack.access. */
  function allowOnlyAlice(cooldownMs: number) {
    return startMemoryBot({
      channel: { channel: "slack" },
      configure: (config) => {
        config.slack.access = { users: ["u-alice"], conversations: ["*"], dm: "open", mentionGate: true, refusalCooldownMs: cooldownMs };
      },
    });
  }

  it("tells a refused sender once, then stays silent within the cooldown", async () => {
    mb = await allowOnlyAlice(60_000);
    const envs = [];
    for (const text of ["hi bot", "hello?", "anyone there?"]) envs.push(await mb.channel.say(text, { userId: "u-mallory", conversationId: "room-1", threadId: "t-m" }));
    await quietFor(300);
    expect(mb.texts(envs[0]!)).toEqual([REFUSAL_TEXT]);
    expect(mb.tb.model.requests).toHaveLength(0);

    const alice = await mb.channel.say("hello from alice");
    await mb.waitFor(alice, "hello from alice");
  });

  it("tells a refused sender again once the cooldown has passed", async () => {
    mb = await allowOnlyAlice(250);
    const first = await mb.channel.say("hi bot", { userId: "u-mallory", threadId: "t-m" });
    await mb.waitFor(first, REFUSAL_TEXT);
    await quietFor(300);
    await mb.channel.say("hi again", { userId: "u-mallory", threadId: "t-m" });
    await quietFor(200);
    expect(mb.texts(first).filter((t) => t === REFUSAL_TEXT)).toHaveLength(2);
  });

  it("ignores a group message that does not address the bot", async () => {
    mb = await allowOnlyAlice(60_000);
    const env = await mb.channel.say("talking among ourselves", { mentioned: false });
    await quietFor(300);
    expect(mb.texts(env)).toEqual([]);
    expect(mb.tb.model.requests).toHaveLength(0);
  });
});

describe("threads the bot already took part in", () => {
  it("answers a follow-up without a mention in a thread it has a conversation in, even after a restart", async () => {
    const channel = new MemoryChannel({ channel: "slack" });
    const fx = await startTestBot({ adapters: [channel] });
    try {
      fx.model.script({ text: "first answer" }, { text: "follow-up answer" }, { text: "never" });
      const first = await channel.say("hello bot", { mentioned: true });
      const thread = first.conversation.threadId!;
      await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, thread).map((m) => m.text)).toContain("first answer"));
      await fx.restart();
      await channel.say("and one more thing", { mentioned: false, threadId: thread });
      await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, thread).map((m) => m.text)).toContain("follow-up answer"));
      await channel.say("chatter elsewhere", { mentioned: false });
      await new Promise((r) => setTimeout(r, 150));
      expect(fx.model.requests).toHaveLength(2);
    } finally {
      await fx.close();
    }
  });

  it("still answers a follow-up without a mention in a thread started afresh with /new, also after a restart", async () => {
    const channel = new MemoryChannel({ channel: "slack" });
    const fx = await startTestBot({ adapters: [channel] });
    try {
      fx.model.script({ text: "first answer" }, { text: "answer after /new" });
      const first = await channel.say("hello bot", { mentioned: true });
      const thread = first.conversation.threadId!;
      await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, thread).map((m) => m.text)).toContain("first answer"));
      await channel.say("/new", { mentioned: true, threadId: thread });
      await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, thread).map((m) => m.text).join("\n")).toMatch(/Started a fresh conversation/));
      await fx.restart();
      await channel.say("what now", { mentioned: false, threadId: thread });
      await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, thread).map((m) => m.text)).toContain("answer after /new"));
      const asked = fx.model.requests[1]!.body.messages as Array<{ role: string; content: string }>;
      expect(asked.map((m) => m.content).join("\n")).not.toMatch(/hello bot|first answer/);
    } finally {
      await fx.close();
    }
  });
});
