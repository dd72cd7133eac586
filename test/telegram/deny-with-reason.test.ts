/**
 * "Deny with reason…" on Telegram: the full bot through the contract, and the adapter's own part —
 * the forced reply it posts (to the card, addressed to the clicker), the clicker's reply becoming
 * the decision and not a message for the bot, and a reply from anyone else deciding nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { approvalButtons, type ApprovalCard } from "../../src/approval/card.ts";
import type { IngressEnvelope } from "../../src/envelope.ts";
import { runDenyWithReasonContract } from "../contract/deny-reason-contract.ts";
import { withPacing } from "../support/fast-pacing.ts";
import type { TgMessage } from "../emulators/telegram/index.ts";
import { createTelegramAdapter, type TelegramAdapterOptions } from "../../adapters/telegram/index.ts";
import { createTelegramHarness, HARNESS_GROUP, memoryOffsetStore, memoryValues, type TelegramHarness } from "./harness.ts";
import { asksForReplyFrom, withTelegramReasonForms } from "./reason-forms.ts";
import { RecordingSink } from "./recording-sink.ts";

runDenyWithReasonContract(
  "telegram",
  async () => withPacing(withTelegramReasonForms(await createTelegramHarness({ emulator: { limits: { groupPerMinute: 1000 } } })), 100),
  { userId: "4242", strangerId: "4343" },
);

let h: TelegramHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const approvalId = "Zx9_kLmN0pQrStUvWxYz0123456789Ab";
const card: ApprovalCard = {
  approvalId,
  tool: "shell",
  argsSummary: "rm -rf build",
  requester: { id: "4242", name: "Ada" },
  approvers: ["the requester"],
  expiresAt: Date.now() + 10 * 60_000,
  buttons: approvalButtons(approvalId),
};

const ADA = { id: 4242, first_name: "Ada" };
const GRACE = { id: 7, first_name: "Grace" };

async function until<T>(check: () => T | undefined, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 15));
  }
}

async function withPrompt(adapter: Partial<TelegramAdapterOptions> = {}): Promise<{ h: TelegramHarness; sink: RecordingSink; env: IngressEnvelope; cardId: number; prompt: TgMessage }> {
  h = await createTelegramHarness({ adapter });
  const sink = new RecordingSink();
  await h.adapter.start(sink);
  h.emulator.userMessage({ text: "clean the build", chat: HARNESS_GROUP, mentionBot: true, topicId: 5, from: ADA });
  const [env] = await sink.waitForEnvelopes(1);
  const sent = await h.adapter.port.requestApproval!(env!.replyTo, card);
  const click = h.emulator.clickButton({ chatId: HARNESS_GROUP.id, messageId: Number(sent.id), data: card.buttons.denyWithReason, from: ADA });
  const answer = await click.answered;
  expect(answer).toEqual({});
  const emulator = h.emulator;
  const prompt = await until(() => emulator.botMessages(HARNESS_GROUP.id).find((m) => m.forceReply));
  return { h, sink, env: env!, cardId: Number(sent.id), prompt };
}

/** Stops the harness's adapter and starts a new one on the same bot, as a restarted process would (with `promptStore`, the same kept prompts). */
async function restartedAdapter(h: TelegramHarness, promptStore?: TelegramAdapterOptions["promptStore"]) {
  await h.adapter.stop();
  const restarted = createTelegramAdapter({
    token: h.emulator.token, apiRoot: h.emulator.apiRoot, offsetStore: memoryOffsetStore(), ...(promptStore ? { promptStore } : {}), pollTimeoutSeconds: 1, retryDelayMs: 50,
  });
  const sink = new RecordingSink();
  await restarted.start(sink);
  return { restarted, sink };
}

/** Ada replies to the prompt with `text`; resolves with her reply once the sink got the deny it makes. */
async function adaReplies(h: TelegramHarness, sink: RecordingSink, prompt: TgMessage, cardId: number, text: string) {
  const reply = h.emulator.userMessage({ text, chat: HARNESS_GROUP, from: ADA, replyToMessageId: prompt.message_id, topicId: 5 });
  await reply.delivered;
  await until(() => sink.clicks[0]);
  expect(sink.clicks).toEqual([
    {
      channel: "telegram", approvalId, choice: "deny", reason: "not on a Friday",
      actor: { id: "4242", name: "Ada", isBot: false }, messageId: String(cardId), conversationId: String(HARNESS_GROUP.id),
    },
  ]);
  return reply;
}

describe("Telegram reason prompt", () => {
  it("answers the click, then asks the clicker alone, in a forced reply to the card in its topic", async () => {
    const { h, sink, cardId, prompt } = await withPrompt();
    expect(prompt.text).toBe("Ada, reply to this message with the reason for denying shell.");
    expect(prompt.reply_to_message?.message_id).toBe(cardId);
    expect(prompt.message_thread_id).toBe(5);
    expect(prompt.forceReply).toEqual({ for: [ADA.id], placeholder: "Why deny it?" });
    expect(asksForReplyFrom(prompt, GRACE.id)).toBe(false);
    expect(sink.clicks).toEqual([]);
    const answeredAt = h.emulator.calls.findIndex((c) => c.method === "answerCallbackQuery");
    const askedAt = h.emulator.calls.findIndex((c) => c.method === "sendMessage" && c.params.reply_markup !== undefined && JSON.stringify(c.params.reply_markup).includes("force_reply"));
    expect(answeredAt).toBeGreaterThanOrEqual(0);
    expect(answeredAt).toBeLessThan(askedAt);
  });

  it("makes the clicker's reply a deny with its text as the reason, not a message for the bot", async () => {
    const { h, sink, cardId, prompt } = await withPrompt();
    const reply = await adaReplies(h, sink, prompt, cardId, "  not on a Friday  ");
    await new Promise((r) => setTimeout(r, 200));
    expect(sink.envelopes).toHaveLength(1);
    expect(h.emulator.botMessages(HARNESS_GROUP.id).filter((m) => m.reply_to_message?.message_id === reply.message.message_id)).toEqual([]);
  });

  it("cuts a reply longer than 500 characters to a reason of 500, marked as cut", async () => {
    const { h, sink, prompt } = await withPrompt();
    const reply = h.emulator.userMessage({ text: `${"why ".repeat(150)}𝐀𝐀`, chat: HARNESS_GROUP, from: ADA, replyToMessageId: prompt.message_id, topicId: 5 });
    await reply.delivered;
    const click = await until(() => sink.clicks[0]);
    expect(click.reason).toHaveLength(500);
    expect(click.reason!.endsWith("…")).toBe(true);
    expect(click.reason!.startsWith("why why")).toBe(true);
  });

  it("tells someone else who replies to the prompt that only the clicker was asked, and decides nothing", async () => {
    const { h, sink, prompt } = await withPrompt();
    const reply = h.emulator.userMessage({ text: "deny it, I say", chat: HARNESS_GROUP, from: GRACE, replyToMessageId: prompt.message_id, topicId: 5 });
    await reply.delivered;
    const told = await until(() => h!.emulator.botMessages(HARNESS_GROUP.id).find((m) => m.reply_to_message?.message_id === reply.message.message_id));
    expect(told.text).toMatch(/^Only Ada was asked for this reason; nothing was decided\./);
    expect(told.message_thread_id).toBe(5);
    expect(sink.clicks).toEqual([]);
    expect(sink.envelopes).toHaveLength(1);
  });

  it("answers the clicker's reply with the gateway's refusal, as a reply to it", async () => {
    const { h, sink, prompt } = await withPrompt();
    sink.outcome = { status: "expired", message: "This approval has expired; nothing was run. Ask the bot again." };
    const reply = h.emulator.userMessage({ text: "too late", chat: HARNESS_GROUP, from: ADA, replyToMessageId: prompt.message_id, topicId: 5 });
    await reply.delivered;
    const told = await until(() => h!.emulator.botMessages(HARNESS_GROUP.id).find((m) => m.reply_to_message?.message_id === reply.message.message_id));
    expect(told.text).toBe("This approval has expired; nothing was run. Ask the bot again.");
  });

  it("after a restart, takes the clicker's reply to the prompt asked before it as the deny with its reason", async () => {
    const prompts = memoryValues();
    const { h, cardId, prompt } = await withPrompt({ promptStore: prompts });
    const { restarted, sink } = await restartedAdapter(h, prompts);
    try {
      // Someone else's reply still decides nothing.
      const stranger = h.emulator.userMessage({ text: "ship it", chat: HARNESS_GROUP, from: GRACE, replyToMessageId: prompt.message_id, topicId: 5 });
      await stranger.delivered;
      const told = await until(() => h.emulator.botMessages(HARNESS_GROUP.id).find((m) => m.reply_to_message?.message_id === stranger.message.message_id));
      expect(told.text).toMatch(/^Only Ada was asked for this reason; nothing was decided\./);
      await adaReplies(h, sink, prompt, cardId, "not on a Friday");
      await new Promise((r) => setTimeout(r, 200));
      expect(sink.envelopes).toEqual([]);
    } finally {
      await restarted.stop();
    }
  });

  it("after a restart, answers a reply to a prompt the store does not know: nothing decided, use the card again; not a message for the bot", async () => {
    const { h, prompt } = await withPrompt();
    const { restarted, sink } = await restartedAdapter(h);
    try {
      const reply = h.emulator.userMessage({ text: "not on a Friday", chat: HARNESS_GROUP, from: ADA, replyToMessageId: prompt.message_id, topicId: 5 });
      await reply.delivered;
      const told = await until(() => h.emulator.botMessages(HARNESS_GROUP.id).find((m) => m.reply_to_message?.message_id === reply.message.message_id));
      expect(told.text).toMatch(/^I restarted after asking for this reason, so it was not recorded and nothing was decided\. .*“Deny with reason…”/);
      expect(told.message_thread_id).toBe(5);
      await new Promise((r) => setTimeout(r, 200));
      expect(sink.clicks).toEqual([]);
      expect(sink.envelopes).toEqual([]);
    } finally {
      await restarted.stop();
    }
  });

  it("still answers /stop sent as a reply to the prompt as a command", async () => {
    const { h, sink, prompt } = await withPrompt();
    const reply = h.emulator.userMessage({ text: "/stop", chat: HARNESS_GROUP, from: ADA, replyToMessageId: prompt.message_id, topicId: 5 });
    await reply.delivered;
    await sink.waitForEnvelopes(2);
    expect(sink.envelopes[1]!.text).toBe("/stop");
    expect(sink.clicks).toEqual([]);
  });
});
