import { afterEach, describe, expect, it } from "vitest";
import { sessionKeyOf } from "../../src/envelope.ts";
import { createTelegramHarness, HARNESS_GROUP, type TelegramHarness } from "./harness.ts";
import { RecordingSink } from "./recording-sink.ts";

let h: TelegramHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function started() {
  h = await createTelegramHarness();
  const sink = new RecordingSink();
  await h.adapter.start(sink);
  return { h, sink, emu: h.emulator };
}

describe("telegram inbound", () => {
  it("turns a private message into a DM envelope addressed to the bot", async () => {
    const { sink, emu } = await started();
    const posted = emu.userMessage({ text: "hello there", from: { id: 77, first_name: "Grace", last_name: "Hopper" } });
    const [env] = await sink.waitForEnvelopes(1);
    expect(env).toMatchObject({
      id: `77:${posted.message.message_id}`,
      channel: "telegram",
      conversation: { id: "77", kind: "dm" },
      sender: { id: "77", name: "Grace Hopper", isBot: false },
      mentioned: true,
      text: "hello there",
      replyTo: { channel: "telegram", conversationId: "77", replyToMessageId: String(posted.message.message_id) },
    });
    expect(env!.conversation.threadId).toBeUndefined();
    expect(env!.capabilities.maxMessageChars).toBe(4096);
  });

  it("ignores a group message that does not address the bot and delivers one that mentions it, without the mention", async () => {
    const { sink, emu } = await started();
    emu.userMessage({ text: "just chatting", chat: HARNESS_GROUP });
    emu.userMessage({ text: "what is the build status?", chat: HARNESS_GROUP, mentionBot: true });
    const envs = await sink.waitForEnvelopes(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(envs).toHaveLength(1);
    expect(envs[0]).toMatchObject({ conversation: { id: String(HARNESS_GROUP.id), kind: "group" }, mentioned: true, text: "what is the build status?" });
  });

  it("delivers a group reply to the bot's own message and marks it as such", async () => {
    const { sink, emu, h } = await started();
    emu.userMessage({ text: "start", chat: HARNESS_GROUP, mentionBot: true });
    const [first] = await sink.waitForEnvelopes(1);
    const sent = await h.adapter.port.send(first!.replyTo, { text: "Working on it" });
    emu.userMessage({ text: "and also this", chat: HARNESS_GROUP, replyToMessageId: Number(sent.id) });
    const envs = await sink.waitForEnvelopes(2);
    expect(envs[1]).toMatchObject({ mentioned: true, repliedToBot: true, text: "and also this" });
  });

  it("treats the bot's commands in a group as addressed, also with @botname", async () => {
    const { sink, emu } = await started();
    emu.userMessage({ text: "/help", chat: HARNESS_GROUP });
    emu.userMessage({ text: "/stop", chat: HARNESS_GROUP });
    emu.userMessage({ text: "/status@gatehouse_bot", chat: HARNESS_GROUP });
    emu.userMessage({ text: "/stop@some_other_bot", chat: HARNESS_GROUP });
    const envs = await sink.waitForEnvelopes(2);
    await new Promise((r) => setTimeout(r, 200));
    expect(envs.map((e) => e.text).sort()).toEqual(["/status@gatehouse_bot", "/stop"]);
  });

  it("recognizes a text_mention of the bot", async () => {
    const { sink, emu } = await started();
    emu.userMessage({
      text: "Gatehouse please check",
      chat: HARNESS_GROUP,
      entities: [{ type: "text_mention", offset: 0, length: 9, user: emu.bot }],
    });
    const [env] = await sink.waitForEnvelopes(1);
    expect(env).toMatchObject({ mentioned: true, text: "please check" });
  });

  it("keeps forum topics as separate sessions and answers inside the topic", async () => {
    const { h, sink, emu } = await started();
    emu.userMessage({ text: "in topic 7", chat: HARNESS_GROUP, mentionBot: true, topicId: 7 });
    emu.userMessage({ text: "in topic 9", chat: HARNESS_GROUP, mentionBot: true, topicId: 9 });
    emu.userMessage({ text: "in general", chat: HARNESS_GROUP, mentionBot: true });
    const envs = await sink.waitForEnvelopes(3);
    const byText = new Map(envs.map((e) => [e.text, e]));
    const keys = new Set(envs.map((e) => sessionKeyOf(e)));
    expect(keys.size).toBe(3);
    expect(byText.get("in topic 7")!.conversation.threadId).toBe("7");
    expect(byText.get("in general")!.conversation.threadId).toBeUndefined();

    await h.adapter.port.send(byText.get("in topic 7")!.replyTo, { text: "on it" });
    expect(emu.botMessages(HARNESS_GROUP.id, 7).map((m) => m.text)).toEqual(["on it"]);
    emu.userMessage({ text: "follow-up", chat: HARNESS_GROUP, mentionBot: true, topicId: 7 });
    const later = await sink.waitForEnvelopes(4);
    expect(later[3]).toMatchObject({ inBotThread: true, conversation: { threadId: "7" } });
  });

  it("ignores messages from bots, edits and service messages", async () => {
    const { sink, emu } = await started();
    emu.userMessage({ text: "beep", from: { id: 999, first_name: "Other", is_bot: true } });
    emu.state.enqueue({ edited_message: { message_id: 1, date: 0, chat: { id: 5, type: "private" }, from: { id: 5, is_bot: false, first_name: "E" }, text: "edited" } });
    emu.state.enqueue({ message: { message_id: 2, date: 0, chat: HARNESS_GROUP, from: { id: 5, is_bot: false, first_name: "E" } } as never });
    emu.userMessage({ text: "a real one" });
    const envs = await sink.waitForEnvelopes(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(envs.map((e) => e.text)).toEqual(["a real one"]);
  });

  it("answers an anonymous admin as the group and someone posting as a channel as that channel; skips the linked channel's automatic forwards", async () => {
    const { sink, emu } = await started();
    const channel = { id: -1002000, type: "channel" as const, title: "Release notes" };
    emu.userMessage({ text: "v2.3 is out, changelog inside", chat: HARNESS_GROUP, automaticForwardFrom: channel, mentionBot: true });
    emu.userMessage({ text: "deploy status?", chat: HARNESS_GROUP, senderChat: HARNESS_GROUP, mentionBot: true });
    emu.userMessage({ text: "and the release?", chat: HARNESS_GROUP, senderChat: channel, mentionBot: true });
    const envs = await sink.waitForEnvelopes(2);
    await new Promise((r) => setTimeout(r, 200));
    expect(sink.envelopes.map((e) => [e.text, e.sender])).toEqual([
      ["deploy status?", { id: String(HARNESS_GROUP.id), name: "Team (anonymous admin)", isBot: false }],
      ["and the release?", { id: String(channel.id), name: "Release notes", isBot: false }],
    ]);
    expect(envs[0]).toMatchObject({ mentioned: true, conversation: { id: String(HARNESS_GROUP.id), kind: "group" } });
  });

  it("gives a redelivered message the same envelope id", async () => {
    const { h, sink } = await started();
    await h.userSays("run the report", { dm: true });
    await h.redeliverLast();
    const envs = await sink.waitForEnvelopes(2);
    expect(envs[1]!.id).toBe(envs[0]!.id);
  });

  it("keeps the order of one chat's messages while another chat's message is not held up", async () => {
    const { sink, emu } = await started();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    sink.hold = (env) => (env.text === "first" ? gate : Promise.resolve());
    emu.userMessage({ text: "first", from: { id: 1, first_name: "A" } });
    emu.userMessage({ text: "second", from: { id: 1, first_name: "A" } });
    emu.userMessage({ text: "elsewhere", from: { id: 2, first_name: "B" } });
    await sink.waitForEnvelopes(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(sink.envelopes.map((e) => e.text)).toEqual(["first", "elsewhere"]);
    release();
    await sink.waitForEnvelopes(3);
    expect(sink.envelopes.map((e) => e.text)).toEqual(["first", "elsewhere", "second"]);
  });

  it("lets /stop through while an earlier message of the same chat is still held by the gateway", async () => {
    const { sink, emu } = await started();
    sink.hold = (env) => (env.text === "long task" ? new Promise(() => {}) : Promise.resolve());
    emu.userMessage({ text: "long task" });
    emu.userMessage({ text: "/stop" });
    const envs = await sink.waitForEnvelopes(2);
    expect(envs.map((e) => e.text)).toEqual(["long task", "/stop"]);
  });
});
