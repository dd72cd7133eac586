import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../support/bot.ts";
import { lastUserText, messagesOf } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

const isSummaryRequest = (r: Parameters<typeof messagesOf>[0]) => String(messagesOf(r)[0]?.content).includes("running summary");

describe("/compact and /status", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("/status says how full the context is; /compact summarizes before the next message and /status then says so", async () => {
    mb = await startMemoryBot({ configure: (config) => void (config.model.contextTokens = 8192) });
    const env = await mb.channel.say("/compact");
    await mb.waitFor(env, "There is no earlier conversation here to compact.");

    const first = await mb.channel.say("tell me about the build");
    const thread = { threadId: first.conversation.threadId };
    await mb.waitFor(first, "] tell me about the build");
    await mb.channel.say("and the tests?", thread);
    await mb.waitFor(first, "] and the tests?");

    await mb.channel.say("/status", thread);
    const status = await mb.waitFor(first, "Idle: nothing is running here.");
    expect(status.text).toMatch(/^Idle: nothing is running here\. Context \d+% of 8K\.$/);

    await mb.channel.say("/compact", thread);
    await mb.waitFor(first, "I'll summarize the earlier conversation here before answering the next message");
    await mb.channel.say("/status", thread);
    await mb.waitFor(first, "/compact waits for the next message");

    const asked = mb.tb.model.requests.length;
    await mb.channel.say("what next?", thread);
    await mb.waitFor(first, "] what next?");
    await mb.waitFor(first, "🗜️ Summarized 4 earlier messages of this conversation as asked with /compact.");
    const after = mb.tb.model.requests.slice(asked);
    expect(isSummaryRequest(after[0]!)).toBe(true);
    expect(after[0]!.body.tools).toBeUndefined();
    const answered = after.find((r) => lastUserText(r).includes("what next?"))!;
    // The summary stands in for the four earlier messages: the system message carries it, the old questions are gone.
    expect(String(messagesOf(answered)[0]!.content)).toContain("[Summary of the earlier conversation");
    expect(messagesOf(answered).slice(1).some((m) => String(m.content).includes("tell me about the build"))).toBe(false);

    await mb.channel.say("/status", thread);
    await eventually(() => mb!.texts(first).at(-1)?.match(/^Idle: nothing is running here\. Context \d+% of 8K, compacted once\.$/), "/status naming the compaction");

    await mb.channel.say("/new", thread);
    await mb.waitFor(first, "Started a fresh conversation");
    await mb.channel.say("/status", thread);
    await eventually(() => mb!.texts(first).at(-1) === "Idle: nothing is running here.", "/status without a context after /new");
  });
});
