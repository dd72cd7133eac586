/**
 * "Deny with reason…" on Telegram: the full bot through the contract, and the adapter's own part —
 * the forced reply it posts (to the card, addressed to the clicker), the clicker's reply becoming
 * the decision and not a message for the bot, and a reply from anyone else deciding nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { approvalButtons, type ApprovalCard } from "../../src/approval/card.ts";
import type { IngressEnvelope } from "../../src/envelope.ts";
import { runDenyWithReasonContract } from "../contract/deny-reason-contract.ts";
import { withPacing } from "../support/fast-pacing.ts";
import { startTelegramEmulator, type TgMessage } from "../emulators/telegram/index.ts";
import { createTelegramAdapter, type TelegramAdapterOptions } from "../../adapters/telegram/index.ts";
import { telegramFromConfig } from "../../adapters/telegram/from-config.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
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

/** Stops the harness's adapter and starts a new one on the same bot, as a restarted process would (with a `promptStore`, the same kept prompts). */
async function restartedAdapter(h: TelegramHarness, options: Partial<TelegramAdapterOptions> = {}) {
  await h.adapter.stop();
  const restarted = createTelegramAdapter({
    token: h.emulator.token, apiRoot: h.emulator.apiRoot, offsetStore: memoryOffsetStore(), pollTimeoutSeconds: 1, retryDelayMs: 50, ...options,
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

/**
 * Ada replies to a prompt the adapter does not know (asked before a restart and not kept, or kept
 * too long ago): she is told, in the prompt's topic, that nothing was decided and to use the card's
 * buttons if it still has them; nothing reaches the gateway.
 */
async function adaRepliesToForgottenPrompt(h: TelegramHarness, sink: RecordingSink, prompt: TgMessage) {
  const reply = h.emulator.userMessage({ text: "not on a Friday", chat: HARNESS_GROUP, from: ADA, replyToMessageId: prompt.message_id, topicId: 5 });
  await reply.delivered;
  const told = await until(() => h.emulator.botMessages(HARNESS_GROUP.id).find((m) => m.reply_to_message?.message_id === reply.message.message_id));
  expect(told.text).toBe(
    "I restarted after asking for this reason, so it was not recorded and nothing was decided. If the card still has its buttons, use them again (“Deny with reason…” asks anew).",
  );
  expect(told.message_thread_id).toBe(5);
  await new Promise((r) => setTimeout(r, 200));
  expect(sink.clicks).toEqual([]);
  expect(sink.envelopes).toEqual([]);
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
    const { restarted, sink } = await restartedAdapter(h, { promptStore: prompts });
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
      await adaRepliesToForgottenPrompt(h, sink, prompt);
    } finally {
      await restarted.stop();
    }
  });

  it("deletes kept prompts older than keepPromptsMs when it starts; a reply to one then decides nothing", async () => {
    const prompts = memoryValues();
    const before = Date.now();
    const { h, prompt } = await withPrompt({ promptStore: prompts });
    const promptKey = `${HARNESS_GROUP.id}:${prompt.message_id}`;
    const kept = JSON.parse(prompts.map.get(promptKey)!) as { askedAt: number };
    expect(kept.askedAt).toBeGreaterThanOrEqual(before);
    expect(kept.askedAt).toBeLessThanOrEqual(Date.now());
    // Two hours later (kept for one): the prompt is old; another asked a minute ago is not; one kept
    // by an older version (no date) is dated now; one that cannot be read goes.
    const hours = (n: number) => n * 3_600_000;
    prompts.map.set(promptKey, JSON.stringify({ ...kept, askedAt: Date.now() - hours(2) }));
    const recent = { approvalId: "recent", clickerId: "4242", clickerName: "Ada", cardMessageId: "90", askedAt: Date.now() - 60_000 };
    const legacy = { approvalId: "legacy", clickerId: "4242", clickerName: "Ada", cardMessageId: "91" };
    prompts.map.set("-100:901", JSON.stringify(recent));
    prompts.map.set("-100:902", JSON.stringify(legacy));
    prompts.map.set("-100:903", "{not json");
    const { restarted, sink } = await restartedAdapter(h, { promptStore: prompts, keepPromptsMs: hours(1) });
    try {
      await until(() => (prompts.map.has(promptKey) ? undefined : true));
      await until(() => (prompts.map.has("-100:903") ? undefined : true));
      expect(JSON.parse(prompts.map.get("-100:901")!)).toEqual(recent);
      const dated = JSON.parse((await until(() => (prompts.map.get("-100:902")?.includes("askedAt") ? prompts.map.get("-100:902") : undefined)))!);
      expect(dated).toMatchObject(legacy);
      expect(Date.now() - dated.askedAt).toBeLessThan(60_000);
      expect([...prompts.map.keys()].sort()).toEqual(["-100:901", "-100:902"]);

      await adaRepliesToForgottenPrompt(h, sink, prompt);
    } finally {
      await restarted.stop();
    }
  });

  it("built from the config, keeps prompts in the store for the approval timeout and a day, then deletes them", async () => {
    const emulator = await startTelegramEmulator();
    const dir = mkdtempSync(path.join(tmpdir(), "gh-tg-prompts-"));
    const store = await openSqliteStore({ dataDir: dir });
    const day = 24 * 3_600_000;
    const asked = (approval: string, agoMs: number) => JSON.stringify({ approvalId: approval, clickerId: "4242", clickerName: "Ada", cardMessageId: "5", askedAt: Date.now() - agoMs });
    // Approval timeout: one hour. Asked a day and two hours ago: gone. A day ago: kept.
    await store.setValue("telegram.reason-prompt:-100:1", asked("old", day + 2 * 3_600_000));
    await store.setValue("telegram.reason-prompt:-100:2", asked("young", day));
    await store.setValue("telegram.offset-unrelated", "stays");
    const adapter = telegramFromConfig({
      settings: { botToken: emulator.token, apiRoot: emulator.apiRoot, access: { mentionGate: true } }, log: silentLogger(),
      values: {
        get: (key) => store.getValue(key), set: (key, value) => store.setValue(key, value),
        list: (prefix) => store.listValues(prefix), delete: (key) => store.deleteValue(key),
      },
      approvalTimeoutMs: 3_600_000,
    });
    try {
      await adapter.start(new RecordingSink());
      const end = Date.now() + 3000;
      while ((await store.getValue("telegram.reason-prompt:-100:1")) !== undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 15));
      expect((await store.listValues("telegram.reason-prompt:")).map((v) => v.key)).toEqual(["telegram.reason-prompt:-100:2"]);
      expect(await store.getValue("telegram.offset-unrelated")).toBe("stays");
    } finally {
      await adapter.stop();
      await store.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
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
