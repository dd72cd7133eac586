import { afterEach, describe, expect, it } from "vitest";
import { sessionKeyOf } from "../../src/envelope.ts";
import { createDiscordAdapter } from "../../adapters/discord/index.ts";
import { RecordingSink } from "./recording-sink.ts";
import { startHarness, type Started } from "./setup.ts";

let started: Started | undefined;
afterEach(async () => {
  await started?.h.close();
  started = undefined;
});

const ALICE = "300000000000000001";

describe("Discord inbound messages", () => {
  it("turns a mention in a server channel into an envelope answered in a new thread on that message", async () => {
    started = await startHarness();
    const { h, sink } = started;
    const posted = await h.userSays("deploy the docs", { userId: ALICE, userName: "Alice" });
    const [env] = await sink.waitForEnvelopes(1);
    expect(env).toMatchObject({
      id: posted.messageId,
      channel: "discord",
      conversation: { id: h.emulator.textChannelId, threadId: posted.messageId, kind: "channel" },
      sender: { id: ALICE, name: "Alice", isBot: false },
      mentioned: true,
      text: "deploy the docs",
      replyTo: { channel: "discord", conversationId: posted.messageId, threadId: posted.messageId },
      capabilities: { maxMessageChars: 2000, maxButtonPayloadBytes: 100, threads: true, inlineApproval: true },
    });
  });

  it("starts the thread on the first reply and keeps follow-ups in that thread in the same session", async () => {
    started = await startHarness();
    const { h, sink } = started;
    const posted = await h.userSays("hello", { userId: ALICE });
    const [first] = await sink.waitForEnvelopes(1);
    await h.adapter.port.send(first!.replyTo, { text: "On it." });

    const thread = h.emulator.state.channels.get(posted.messageId);
    expect(thread).toMatchObject({ type: 11, parent_id: h.emulator.textChannelId, owner_id: h.emulator.bot.id });
    expect((await h.botMessages(posted.conversationId, posted.threadId)).map((m) => m.text)).toEqual(["On it."]);
    expect(h.emulator.messages(h.emulator.textChannelId).filter((m) => m.author.bot)).toEqual([]);

    await h.userSays("and the changelog too", { userId: ALICE, threadId: posted.messageId, mention: false });
    const [, followUp] = await sink.waitForEnvelopes(2);
    expect(followUp).toMatchObject({ mentioned: false, inBotThread: true, text: "and the changelog too", replyTo: { conversationId: posted.messageId } });
    expect(sessionKeyOf(followUp!)).toBe(sessionKeyOf(first!));
  });

  it("treats every direct message as addressed to the bot and answers in place", async () => {
    started = await startHarness();
    const { h, sink } = started;
    const posted = await h.userSays("what can you do?", { userId: ALICE, dm: true });
    const [env] = await sink.waitForEnvelopes(1);
    expect(env).toMatchObject({ conversation: { id: posted.conversationId, kind: "dm" }, mentioned: true, text: "what can you do?" });
    expect(env!.conversation.threadId).toBeUndefined();
    await h.adapter.port.send(env!.replyTo, { text: "Quite a lot." });
    expect((await h.botMessages(posted.conversationId)).map((m) => m.text)).toEqual(["Quite a lot."]);
  });

  it("strips the nickname form of the bot mention too", async () => {
    started = await startHarness();
    const { h, sink } = started;
    await h.emulator.userPosts({ channelId: h.emulator.textChannelId, userId: ALICE, content: `hey <@!${h.emulator.bot.id}>  check this` });
    const [env] = await sink.waitForEnvelopes(1);
    expect(env!.text).toBe("hey check this");
  });

  it("treats a mention of the bot's managed role as addressing the bot, and strips the role mention", async () => {
    started = await startHarness();
    const { h, sink } = started;
    const posted = await h.emulator.userPosts({ channelId: h.emulator.textChannelId, userId: ALICE, content: "rotate the keys", mentionRoles: [h.emulator.botRoleId] });
    expect(posted.content).toBe(`<@&${h.emulator.botRoleId}> rotate the keys`);
    const [env] = await sink.waitForEnvelopes(1);
    expect(env).toMatchObject({ id: posted.id, mentioned: true, text: "rotate the keys", conversation: { threadId: posted.id } });
  });

  it("does not treat a mention of another role as addressing the bot", async () => {
    started = await startHarness();
    const { h, sink } = started;
    const channelId = h.emulator.textChannelId;
    await h.emulator.userPosts({ channelId, userId: ALICE, content: "ping the team", mentionRoles: ["400000000000000001"] });
    await h.userSays("sentinel", { userId: ALICE });
    const envelopes = await sink.waitForEnvelopes(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(envelopes.map((e) => e.text)).toEqual(["sentinel"]);
  });

  it("ignores channel chatter that does not address the bot, other bots, and its own posts", async () => {
    started = await startHarness();
    const { h, sink } = started;
    const channelId = h.emulator.textChannelId;
    await h.emulator.userPosts({ channelId, userId: ALICE, content: "just talking among ourselves" });
    await h.emulator.userPosts({ channelId, userId: "300000000000000099", bot: true, content: `<@${h.emulator.bot.id}> I am a bot` });
    await h.adapter.port.send({ channel: "discord", conversationId: channelId }, { text: `<@${h.emulator.bot.id}> talking to myself` });
    await h.userSays("the real question", { userId: ALICE });
    const envelopes = await sink.waitForEnvelopes(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(envelopes.map((e) => e.text)).toEqual(["the real question"]);
  });

  it("forwards a reply to one of the bot's messages without a mention", async () => {
    started = await startHarness();
    const { h, sink } = started;
    const channelId = h.emulator.textChannelId;
    const sent = await h.adapter.port.send({ channel: "discord", conversationId: channelId }, { text: "Anything else?" });
    await h.emulator.userPosts({ channelId, userId: ALICE, content: "yes, one more", replyTo: sent.id });
    const [env] = await sink.waitForEnvelopes(1);
    expect(env).toMatchObject({ repliedToBot: true, mentioned: false, text: "yes, one more" });
  });

  it("answers a redelivered message once, and gives it the same id after a restart", async () => {
    started = await startHarness();
    const { h, sink } = started;
    await h.userSays("run the report", { userId: ALICE });
    await sink.waitForEnvelopes(1);
    await h.redeliverLast();
    await h.userSays("second", { userId: ALICE });
    const envelopes = await sink.waitForEnvelopes(2);
    expect(envelopes.map((e) => e.text)).toEqual(["run the report", "second"]);

    // A fresh process has no cache: the redelivered event reaches the sink, with the same id.
    await h.adapter.stop();
    const restarted = createDiscordAdapter({ token: h.emulator.token, apiUrl: h.emulator.apiUrl });
    const sink2 = new RecordingSink();
    await restarted.start(sink2);
    try {
      await h.redeliverLast();
      const [again] = await sink2.waitForEnvelopes(1);
      expect(again!.id).toBe(envelopes[1]!.id);
    } finally {
      await restarted.stop();
    }
  });

  it("serves only the allowed channels when an allowlist is set", async () => {
    started = await startHarness({ allowedChannels: ["123456789012345678"] });
    const { h, sink } = started;
    await h.userSays("hello?", { userId: ALICE });
    await h.userSays("dm still works", { userId: ALICE, dm: true });
    const envelopes = await sink.waitForEnvelopes(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(envelopes.map((e) => e.text)).toEqual(["dm still works"]);
  });
});
