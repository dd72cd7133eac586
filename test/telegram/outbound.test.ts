import { afterEach, describe, expect, it } from "vitest";
import { MessageRejectedError, RateLimitedError } from "../../src/ports.ts";
import type { IngressEnvelope } from "../../src/envelope.ts";
import { createTelegramHarness, HARNESS_GROUP, type TelegramHarness } from "./harness.ts";
import { RecordingSink } from "./recording-sink.ts";

let h: TelegramHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function withMessage(chat: "dm" | "group" = "dm", topicId?: number): Promise<{ h: TelegramHarness; env: IngressEnvelope }> {
  h = await createTelegramHarness();
  const sink = new RecordingSink();
  await h.adapter.start(sink);
  if (chat === "dm") h.emulator.userMessage({ text: "hi" });
  else h.emulator.userMessage({ text: "hi", chat: HARNESS_GROUP, mentionBot: true, ...(topicId !== undefined ? { topicId } : {}) });
  const [env] = await sink.waitForEnvelopes(1);
  return { h, env: env! };
}

describe("telegram outbound port", () => {
  it("replies to the user's message with reply_parameters and HTML", async () => {
    const { h, env } = await withMessage("dm");
    const sent = await h.adapter.port.send(env.replyTo, { text: "Here is **the answer**" });
    const [call] = h.emulator.callsOf("sendMessage");
    expect(call!.params).toMatchObject({
      chat_id: 4242,
      parse_mode: "HTML",
      text: "Here is <b>the answer</b>",
      reply_parameters: { message_id: Number(env.replyTo.replyToMessageId), allow_sending_without_reply: true },
    });
    const shown = h.emulator.botMessages(4242);
    expect(shown.map((m) => [String(m.message_id), m.text, m.reply_to_message?.message_id])).toEqual([
      [sent.id, "Here is the answer", Number(env.replyTo.replyToMessageId)],
    ]);
  });

  it("posts into the forum topic of the message", async () => {
    const { h, env } = await withMessage("group", 31);
    await h.adapter.port.send(env.replyTo, { text: "in the topic" });
    expect(h.emulator.callsOf("sendMessage")[0]!.params).toMatchObject({ message_thread_id: 31 });
    expect(h.emulator.botMessages(HARNESS_GROUP.id, 31).map((m) => m.text)).toEqual(["in the topic"]);
  });

  it("delivers an answer full of markup characters", async () => {
    const { h, env } = await withMessage();
    const text = "if a < b && b > c { x = y_z * 2 } **done** <script> & _ * ` [x](";
    await h.adapter.port.send(env.replyTo, { text });
    const [shown] = h.emulator.botMessages(4242);
    expect(shown!.text).toContain("a < b && b > c");
    expect(shown!.text).toContain("<script> &");
  });

  it("retries as plain text inside the port when Telegram refuses the markup", async () => {
    const { h, env } = await withMessage();
    h.emulator.failNext("sendMessage", { status: 400, description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0" });
    const sent = await h.adapter.port.send(env.replyTo, { text: "**still** arrives" });
    const calls = h.emulator.callsOf("sendMessage");
    expect(calls).toHaveLength(2);
    expect(calls[1]!.params.parse_mode).toBeUndefined();
    expect(h.emulator.botMessages(4242).map((m) => [String(m.message_id), m.text])).toEqual([[sent.id, "**still** arrives"]]);
  });

  it("rejects text over 4,096 characters as too long", async () => {
    const { h, env } = await withMessage();
    const err = await h.adapter.port.send(env.replyTo, { text: "a".repeat(4097) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageRejectedError);
    expect((err as MessageRejectedError).reason).toBe("too_long");
    await expect(h.adapter.port.send(env.replyTo, { text: "**" + "a".repeat(4090) + "**" })).resolves.toHaveProperty("id");
  });

  it("surfaces the per-chat limit as RateLimitedError with the advised delay", async () => {
    const { h, env } = await withMessage();
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => h.adapter.port.send(env.replyTo, { text: `line ${n}` })));
    const limited = results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason);
    expect(limited).toHaveLength(1);
    expect(limited[0]).toBeInstanceOf(RateLimitedError);
    expect((limited[0] as RateLimitedError).retryAfterMs).toBe(1000);
  });

  it("passes Telegram's retry_after through on an injected 429, as a hold on that chat only", async () => {
    const { h, env } = await withMessage();
    h.emulator.failNext("sendMessage", { status: 429, retryAfter: 7 });
    const err = await h.adapter.port.send(env.replyTo, { text: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(7000);
    expect((err as RateLimitedError).scope).toBe("conversation");
  });

  it("edits a posted message and treats an unchanged edit as done", async () => {
    const { h, env } = await withMessage();
    const sent = await h.adapter.port.send(env.replyTo, { text: "⏳ shell: ls" });
    await h.adapter.port.edit!(env.replyTo, sent.id, { text: "✅ shell (0.2s)" });
    await h.adapter.port.edit!(env.replyTo, sent.id, { text: "✅ shell (0.2s)" });
    expect(h.emulator.botMessages(4242).map((m) => m.text)).toEqual(["✅ shell (0.2s)"]);
    expect(h.emulator.callsOf("editMessageText").map((c) => c.status)).toEqual([200, 400]);
  });

  it("shows the typing indicator in the chat and topic", async () => {
    const { h, env } = await withMessage("group", 12);
    await h.adapter.port.typing!(env.replyTo);
    expect(h.emulator.callsOf("sendChatAction")[0]!.params).toMatchObject({ chat_id: HARNESS_GROUP.id, action: "typing", message_thread_id: 12 });
  });
});
