/**
 * An MCP server's question (elicitation) in a Telegram chat, through the real adapter and the
 * emulator: each field is a message in the thread with buttons; the requester answers with a
 * click or a reply; someone else's click is refused; the server gets the answers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { McpConfigSchema } from "../../src/tools/mcp/schema.ts";
import { startTestBot, eventually, quietFor, type TestBot } from "../support/bot.ts";
import { callTools, messagesOf, routeModel } from "../support/scenario.ts";
import { FIXTURE_SERVER } from "../mcp/helpers.ts";
import type { SeenMessage } from "../contract/harness.ts";
import { createTelegramHarness, type TelegramHarness } from "./harness.ts";
import { withPacing } from "../support/fast-pacing.ts";

let harness: TelegramHarness | undefined;
let tb: TestBot | undefined;
afterEach(async () => {
  await tb?.close();
  await harness?.close();
  tb = harness = undefined;
});

async function start(slots?: number, timeoutMs = 15_000): Promise<{ h: TelegramHarness; tb: TestBot }> {
  harness = await createTelegramHarness({ emulator: { limits: { groupPerMinute: 1000 } } });
  const h = withPacing(harness, 50) as TelegramHarness;
  tb = await startTestBot({
    adapters: [h.adapter],
    configure: (config) => {
      config.tools.profile = "full";
      config.approval.timeoutMs = timeoutMs;
      if (slots !== undefined) config.gateway.maxConcurrentTurns = slots;
      config.telegram.access = { ...config.telegram.access, users: ["*"], conversations: ["*"] };
      config.mcp = McpConfigSchema.parse({ servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnlyTools: ["deploy"] } } });
    },
  });
  routeModel(tb.model, [{ when: "deploy the build", first: callTools({ name: "fx__deploy" }), then: { text: "The deploy tool has answered." } }]);
  return { h, tb };
}

const withButton = (label: string) => (m: SeenMessage) => m.buttons.some((b) => b.label.includes(label));

describe("an MCP server's question in a Telegram chat", () => {
  it("is asked in the thread, answered by the requester with a click and a reply, and reaches the server", async () => {
    const { h, tb } = await start();
    const posted = await h.userSays("please deploy the build", { userId: "4242" });
    const thread = () => h.botMessages(posted.conversationId, posted.threadId);
    const choice = await eventually(async () => (await thread()).find(withButton("production")), "the environment question");
    expect(choice.text).toContain('MCP server "fx" asks: Where should this build go?');

    const stranger = await h.click(choice, choice.buttons.find((b) => b.label.includes("production"))!.payload, "4343");
    expect(stranger.shownToClicker).toMatch(/may answer this; nothing changed/);
    await h.click(choice, choice.buttons.find((b) => b.label.includes("production"))!.payload, "4242");
    await eventually(async () => (await thread()).find((m) => m.id === choice.id && m.buttons.length === 0), "the answered question without buttons");

    await eventually(async () => (await thread()).find((m) => m.text.includes("Release note")), "the note question");
    // In a group the bot reads only what is addressed to it (a mention, or a reply to its message).
    await h.userSays("first release", { userId: "4242" });
    const review = await eventually(async () => (await thread()).find(withButton("Send")), "the review of the answers");
    await h.click(review, review.buttons.find((b) => b.label.includes("Send"))!.payload, "4242");

    await eventually(async () => (await thread()).find((m) => m.text.includes("The deploy tool has answered.")), "the answer");
    const toolResult = messagesOf(tb.model.requests.at(-1)!).filter((m) => m.role === "tool").map((m) => String(m.content)).join("\n");
    expect(toolResult).toContain("deploying to production: first release");
    // The reply was an answer, not a new message for the model.
    await quietFor(300);
    expect(tb.model.requests.filter((r) => JSON.stringify(r.body).includes("first release") && !JSON.stringify(r.body).includes("deploying"))).toHaveLength(0);
  });

  it("holds no slot and shows no typing while the question waits: with one slot, another chat is answered, then the tool goes on", async () => {
    const { h, tb } = await start(1, 60_000);
    const posted = await h.userSays("please deploy the build", { userId: "4242" });
    const thread = () => h.botMessages(posted.conversationId, posted.threadId);
    const choice = await eventually(async () => (await thread()).find(withButton("production")), "the environment question");
    // The only slot is free while the requester thinks: someone else's message is answered now.
    const other = await h.userSays("what is up", { userId: "5151", dm: true });
    await eventually(async () => (await h.botMessages(other.conversationId)).find((m) => m.text.includes("answer to: what is up")), "the other chat's answer");
    // No "typing…" in the asking chat while the person thinks (it is refreshed every 4 s while the bot works).
    const typingIn = (chat: string) => h.emulator.callsOf("sendChatAction").filter((c) => String(c.params.chat_id) === chat).length;
    const typedBefore = typingIn(posted.conversationId);
    await quietFor(4500);
    expect(typingIn(posted.conversationId)).toBe(typedBefore);
    expect(tb.bot.gateway.status()).toMatchObject({ runningTurns: 0, parkedTurns: 0, askingTurns: 1 });
    await h.userSays("/status", { userId: "4242" });
    await eventually(async () => (await thread()).find((m) => /^Waiting \d+s for an answer to the question above, for: "please deploy the build"/.test(m.text)), "/status while the question waits");
    await h.click(choice, choice.buttons.find((b) => b.label.includes("production"))!.payload, "4242");
    await eventually(async () => (await thread()).find((m) => m.text.includes("Release note")), "the note question");
    await h.userSays("first release", { userId: "4242" });
    const review = await eventually(async () => (await thread()).find(withButton("Send")), "the review of the answers");
    // Still no typing between the steps of the question; it comes back once the tool goes on.
    expect(typingIn(posted.conversationId)).toBe(typedBefore);
    await h.click(review, review.buttons.find((b) => b.label.includes("Send"))!.payload, "4242");
    await eventually(async () => (await thread()).find((m) => m.text.includes("The deploy tool has answered.")), "the answer");
    expect(typingIn(posted.conversationId)).toBeGreaterThan(typedBefore);
    expect(tb.bot.gateway.status()).toMatchObject({ askingTurns: 0 });
  });

  it("tells the server it was cancelled when the requester stops the turn", async () => {
    const { h, tb } = await start();
    const posted = await h.userSays("please deploy the build", { userId: "4242" });
    const thread = () => h.botMessages(posted.conversationId, posted.threadId);
    const choice = await eventually(async () => (await thread()).find(withButton("production")), "the environment question");
    await h.userSays("/stop", { userId: "4242" });
    await eventually(async () => (await thread()).find((m) => m.id === choice.id && m.buttons.length === 0), "the question without buttons");
    await quietFor(300);
    expect(tb.model.requests.filter((r) => messagesOf(r).some((m) => m.role === "tool"))).toHaveLength(0);
  });
});
