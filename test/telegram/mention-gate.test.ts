import { afterEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/schema.ts";
import { AccessControl } from "../../src/gateway/access.ts";
import type { TelegramAdapterOptions } from "../../adapters/telegram/index.ts";
import { createTelegramHarness, HARNESS_GROUP, type TelegramHarness } from "./harness.ts";
import { RecordingSink } from "./recording-sink.ts";

let h: TelegramHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const telegramAccess = (mentionGate: boolean) => ConfigSchema.parse({ telegram: { access: { mentionGate } } }).telegram.access;

async function started(adapter: Partial<TelegramAdapterOptions> = {}) {
  h = await createTelegramHarness({ adapter });
  const sink = new RecordingSink();
  await h.adapter.start(sink);
  return { h, sink, emu: h.emulator };
}

describe("telegram mention gate", () => {
  it("with the gate off, forwards group chatter marked as not addressed, and the gateway lets it through", async () => {
    const { sink, emu } = await started({ mentionGate: false });
    emu.userMessage({ text: "anyone seen the deploy log?", chat: HARNESS_GROUP });
    const [env] = await sink.waitForEnvelopes(1);
    expect(env).toMatchObject({
      conversation: { id: String(HARNESS_GROUP.id), kind: "group" },
      mentioned: false,
      repliedToBot: false,
      inBotThread: false,
      text: "anyone seen the deploy log?",
    });
    const access = new AccessControl();
    expect(access.check(env!, telegramAccess(false)).verdict).toBe("allowed");
    expect(access.check(env!, telegramAccess(true)).verdict).toBe("not-addressed");
  });

  it("with the gate on (the default), drops group chatter", async () => {
    const { sink, emu } = await started();
    emu.userMessage({ text: "just chatting", chat: HARNESS_GROUP });
    emu.userMessage({ text: "sentinel", chat: HARNESS_GROUP, mentionBot: true });
    await sink.waitForEnvelopes(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(sink.envelopes.map((e) => e.text)).toEqual(["sentinel"]);
  });

  it("with the gate on, marks an unmentioned follow-up in the bot's forum topic as in its thread, and drops chatter outside topics", async () => {
    const { h, sink, emu } = await started();
    emu.userMessage({ text: "check the build", chat: HARNESS_GROUP, mentionBot: true, topicId: 7 });
    const [first] = await sink.waitForEnvelopes(1);
    await h.adapter.port.send(first!.replyTo, { text: "Build is green." });

    emu.userMessage({ text: "chatter in another topic", chat: HARNESS_GROUP, topicId: 9 });
    emu.userMessage({ text: "chatter outside topics", chat: HARNESS_GROUP });
    emu.userMessage({ text: "and the tests?", chat: HARNESS_GROUP, topicId: 7 });
    const envs = await sink.waitForEnvelopes(3);
    await new Promise((r) => setTimeout(r, 100));
    // Topic messages reach the gateway, which answers only in topics it already talks in (stored history).
    expect(envs.map((e) => e.text)).toEqual(["check the build", "chatter in another topic", "and the tests?"]);
    expect(envs[1]).toMatchObject({ mentioned: false, inBotThread: false, conversation: { threadId: "9" } });
    expect(envs[2]).toMatchObject({ mentioned: false, inBotThread: true, conversation: { threadId: "7" } });
  });
});
