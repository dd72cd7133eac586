import { afterEach, describe, expect, it } from "vitest";
import { parseBotCommand } from "../../src/envelope.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

const COMMANDS = ["/stop", "/status", "/new", "/compact", "/always", "/help"];

describe("/help", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("recognizes /help and /start (what a Telegram client sends first) only as the whole message", () => {
    expect(parseBotCommand("/help")).toBe("help");
    expect(parseBotCommand(" /HELP@gatehouse_bot ")).toBe("help");
    expect(parseBotCommand("/start")).toBe("help");
    expect(parseBotCommand("/help me write a release note")).toBeUndefined();
    expect(parseBotCommand("/start the deploy")).toBeUndefined();
  });

  it("says what the bot does and lists every command, in the thread, without asking the model", async () => {
    mb = await startMemoryBot();
    const env = await mb.channel.say("/help");
    const help = await mb.waitFor(env, "/always");
    for (const command of COMMANDS) expect(help.text).toContain(`${command} — `);
    expect(help.text).toContain("I answer in a thread, using tools where they help; progress shows as I go. Each thread is its own conversation.");
    expect(help.text).toContain("I post a card with buttons here");
    expect(mb.tb.model.requests).toHaveLength(0);

    // In a thread with a conversation the answer is the same, and the conversation goes on.
    const first = await mb.channel.say("tell me about the build");
    const thread = { threadId: first.conversation.threadId };
    await mb.waitFor(first, "] tell me about the build");
    await mb.channel.say("/start", thread);
    await mb.waitFor(first, "/help — this list");
    await mb.channel.say("and the tests?", thread);
    await mb.waitFor(first, "] and the tests?");
    expect(mb.tb.model.requests).toHaveLength(2);
  });

  it("says where approvals cannot be asked in a channel without buttons, and speaks of 'here' in a direct chat", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: false } } });
    const env = await mb.channel.say("/help", { kind: "dm", mentioned: true });
    const help = await mb.waitFor(env, "/help — this list");
    expect(help.text).toContain("I answer here, using tools");
    expect(help.text).toContain("here I do not run it, and say why");
    expect(help.text).not.toContain("card with buttons");
  });

  it("tells Slack users how to type a command Slack's client would take for its own", async () => {
    mb = await startMemoryBot({ channel: { channel: "slack" } });
    const env = await mb.channel.say("/help");
    const help = await mb.waitFor(env, "/help — this list");
    expect(help.text).toContain("after a mention of me or after a space");
  });

  it("speaks of topics in a Telegram forum, where each topic is its own conversation", async () => {
    mb = await startMemoryBot({ channel: { channel: "telegram" } });
    const env = await mb.channel.say("/help", { threadId: "17" });
    const help = await mb.waitFor(env, "/help — this list");
    expect(help.text).toContain("I answer in this topic, using tools where they help; progress shows as I go. Each topic is its own conversation.");
  });
});
