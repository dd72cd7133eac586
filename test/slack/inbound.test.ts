import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseBotCommand, sessionKeyOf } from "../../src/envelope.ts";
import { ALICE, GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";
import { RecordingSink, settle, until } from "./support.ts";

describe("Slack inbound (Socket Mode)", () => {
  let h: SlackHarness;
  let sink: RecordingSink;

  beforeEach(async () => {
    h = await createSlackHarness();
    sink = new RecordingSink();
    await h.adapter.start(sink);
  });
  afterEach(async () => {
    await h.close();
  });

  it("turns a channel mention into an envelope for its own thread, without the bot's mention", async () => {
    const posted = await h.userSays("deploy <@U0BOB> please");
    const env = await until(() => sink.envelopes[0]);
    expect(env).toMatchObject({
      id: `${GENERAL}:${posted.messageId}`,
      channel: "slack",
      conversation: { id: GENERAL, threadId: posted.messageId, kind: "channel" },
      sender: { id: ALICE, name: "alice", isBot: false },
      mentioned: true,
      inBotThread: false,
      text: "deploy @bob please",
      replyTo: { channel: "slack", conversationId: GENERAL, threadId: posted.messageId },
    });
    expect(sessionKeyOf(env)).toBe(`slack:${GENERAL}:${posted.messageId}`);
  });

  it("acknowledges every event envelope within Slack's 3-second deadline", async () => {
    await h.userSays("hello");
    expect(h.emulator.world.acks.length).toBeGreaterThan(0);
    for (const a of h.emulator.world.acks) expect(a.ms).toBeLessThan(3000);
  });

  it("gives the message and app_mention copies of one post the same id", async () => {
    await h.userSays("hi");
    await until(() => sink.envelopes.length >= 2 && sink.envelopes);
    expect(new Set(sink.envelopes.map((e) => e.id)).size).toBe(1);
  });

  it("gives a redelivered event the same id", async () => {
    await h.userSays("hi", { dm: true });
    await until(() => sink.envelopes[0]);
    await h.redeliverLast();
    await until(() => sink.envelopes.length >= 2);
    expect(sink.envelopes[1]!.id).toBe(sink.envelopes[0]!.id);
  });

  it("treats a direct message as addressed to the bot", async () => {
    const posted = await h.userSays("what is up", { dm: true });
    const env = await until(() => sink.envelopes[0]);
    expect(env.conversation).toEqual({ id: `D${ALICE}`, threadId: posted.messageId, kind: "dm" });
    expect(env.mentioned).toBe(true);
    expect(env.text).toBe("what is up");
  });

  it("says which files were shared, so a file sent without a word still gets an answer", async () => {
    await h.emulator.userPosts({ user: ALICE, channel: `D${ALICE}`, text: "", files: [{ name: "q3-report.pdf" }] });
    await h.emulator.userPosts({ user: ALICE, channel: `D${ALICE}`, text: "what do these say?", files: [{ name: "a.png" }, { name: "b.png" }] });
    await until(() => sink.envelopes[1]);
    expect(sink.envelopes.map((e) => e.text)).toEqual([
      "(shared a file (q3-report.pdf). This bot reads the text of messages only; it cannot open files.)",
      "what do these say?\n(shared 2 files (a.png, b.png). This bot reads the text of messages only; it cannot open files.)",
    ]);
  });

  it("marks a follow-up in a thread the bot posted in, without a mention", async () => {
    const first = await h.userSays("start");
    await h.adapter.port.send({ channel: "slack", conversationId: GENERAL, threadId: first.threadId }, { text: "on it" });
    await until(() => sink.envelopes.length >= 2);
    await h.userSays("and also this", { threadId: first.threadId, mention: false });
    const env = await until(() => sink.envelopes.find((e) => e.text === "and also this"));
    expect(env).toMatchObject({ mentioned: false, inBotThread: true, conversation: { threadId: first.threadId } });
  });

  it("does not mark a thread the bot never posted in", async () => {
    const top = await h.emulator.userPosts({ user: "U0BOB", channel: GENERAL, text: "people talking" });
    await h.userSays("reply", { threadId: top.message.ts, mention: false });
    const env = await until(() => sink.envelopes.find((e) => e.text === "reply"));
    expect(env).toMatchObject({ mentioned: false, inBotThread: false });
  });

  it("ignores other bots, its own messages, edits and joins", async () => {
    await h.emulator.userPosts({ user: "U0OTHERBOT", channel: GENERAL, text: `<@${h.emulator.botUserId}> hi`, asBot: true });
    await h.emulator.userPosts({ user: h.emulator.botUserId, channel: GENERAL, text: "my own words", asBot: true });
    await h.emulator.userPosts({ user: ALICE, channel: GENERAL, text: "edited", subtype: "message_changed" });
    await h.emulator.userPosts({ user: ALICE, channel: GENERAL, text: "joined", subtype: "channel_join" });
    await h.userSays("real one", { dm: true });
    await until(() => sink.envelopes[0]);
    await settle();
    expect(sink.envelopes.map((e) => e.text)).toEqual(["real one"]);
  });

  it("passes /stop typed in a thread through as the message text", async () => {
    const first = await h.userSays("work");
    await h.userSays("/stop", { threadId: first.threadId, mention: false });
    const env = await until(() => sink.envelopes.find((e) => e.text === "/stop"));
    expect(env.conversation.threadId).toBe(first.threadId);
  });

  it("reads /stop written after the bot's mention (as Slack's client lets it be sent) as the command", async () => {
    const first = await h.userSays("work");
    await h.userSays("/stop", { threadId: first.threadId, mention: true });
    const env = await until(() => sink.envelopes.find((e) => e.conversation.threadId === first.threadId && e.text !== "work"));
    expect(parseBotCommand(env.text)).toBe("stop");
  });

  it("turns the /gatehouse slash command into a bot command envelope", async () => {
    const d = await h.emulator.slashCommand(GENERAL, ALICE, "/gatehouse", "status");
    expect(d.timing.ms).toBeLessThan(3000);
    const env = await until(() => sink.envelopes[0]);
    expect(env).toMatchObject({ text: "/status", sender: { id: ALICE }, conversation: { id: GENERAL } });
  });

  it("answers an unknown slash command word with a usage hint and forwards nothing", async () => {
    const d = await h.emulator.slashCommand(GENERAL, ALICE, "/gatehouse", "dance");
    expect(JSON.stringify(d.timing.ackPayload)).toContain("Usage");
    await settle();
    expect(sink.envelopes).toHaveLength(0);
  });

  it("reconnects when Slack asks for a refresh and keeps receiving", async () => {
    h.emulator.requestRefresh();
    await until(() => !h.emulator.world.calls.length || h.emulator.world.calls.filter((c) => c.method === "apps.connections.open").length >= 2, 4000);
    await h.emulator.waitForSocket(4000);
    await h.userSays("after refresh", { dm: true });
    await until(() => sink.envelopes.find((e) => e.text === "after refresh"));
  });
});
