import { afterEach, describe, expect, it } from "vitest";
import { MessageRejectedError, RateLimitedError } from "../../src/ports.ts";
import { startHarness, type Started } from "./setup.ts";

let started: Started | undefined;
afterEach(async () => {
  await started?.h.close();
  started = undefined;
});

async function threadTarget(s: Started) {
  const posted = await s.h.userSays("start", { userId: "300000000000000001" });
  const [env] = await s.sink.waitForEnvelopes(1);
  return { posted, target: env!.replyTo };
}

describe("Discord outbound port", () => {
  it("posts the model's markdown as Discord markdown, code fences untouched", async () => {
    started = await startHarness();
    const { posted, target } = await threadTarget(started);
    await started.h.adapter.port.send(target, { text: "#### Result\n__done__\n```\n__keep__\n```" });
    const [seen] = await started.h.botMessages(posted.conversationId, posted.threadId);
    expect(seen!.text).toBe("**Result**\n**done**\n```\n__keep__\n```");
  });

  it("never pings @everyone from the bot's text", async () => {
    started = await startHarness();
    const { target } = await threadTarget(started);
    await started.h.adapter.port.send(target, { text: "@everyone look" });
    const call = started.h.emulator.calls.findLast((c) => c.route === "createMessage");
    expect(call!.body).toMatchObject({ allowed_mentions: { parse: [] } });
  });

  it("refuses a 5,000-character message with MessageRejectedError too_long (Discord 50035)", async () => {
    started = await startHarness();
    const { target, posted } = await threadTarget(started);
    const err = await started.h.adapter.port.send(target, { text: "x".repeat(5000) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageRejectedError);
    expect((err as MessageRejectedError).reason).toBe("too_long");
    expect(started.h.emulator.calls.findLast((c) => c.route === "createMessage")!.status).toBe(400);
    expect(await started.h.botMessages(posted.conversationId, posted.threadId)).toEqual([]);
  });

  it("surfaces a long 429 as RateLimitedError with the advised delay", async () => {
    started = await startHarness();
    const { target } = await threadTarget(started);
    await started.h.adapter.port.send(target, { text: "first" });
    started.h.emulator.failNext("createMessage", { status: 429, retryAfter: 3 });
    const t0 = Date.now();
    const err = await started.h.adapter.port.send(target, { text: "second" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThanOrEqual(3000);
    expect((err as RateLimitedError).retryAfterMs).toBeLessThan(3500);
    expect((err as RateLimitedError).scope).toBe("conversation");
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it("reports Discord's global 429 as a hold on everything the bot sends", async () => {
    started = await startHarness();
    const { target } = await threadTarget(started);
    await started.h.adapter.port.send(target, { text: "first" });
    started.h.emulator.failNext("createMessage", { status: 429, retryAfter: 3, global: true });
    const err = await started.h.adapter.port.send(target, { text: "second" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).scope).toBe("bot");
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThanOrEqual(2500);
  });

  it("waits out a short 429 inside discord.js and delivers the message", async () => {
    started = await startHarness({ maxRateLimitWaitMs: 1500 });
    const { target, posted } = await threadTarget(started);
    started.h.emulator.failNext("createMessage", { status: 429, retryAfter: 1 });
    await started.h.adapter.port.send(target, { text: "after the wait" });
    const statuses = started.h.emulator.calls.filter((c) => c.route === "createMessage").map((c) => c.status);
    expect(statuses).toEqual([429, 200]);
    expect((await started.h.botMessages(posted.conversationId, posted.threadId)).map((m) => m.text)).toEqual(["after the wait"]);
  });

  it("edits a posted message in place", async () => {
    started = await startHarness();
    const { target, posted } = await threadTarget(started);
    const sent = await started.h.adapter.port.send(target, { text: "⏳ search" });
    await started.h.adapter.port.edit!(target, sent.id, { text: "✅ search (1.2s)" });
    expect((await started.h.botMessages(posted.conversationId, posted.threadId)).map((m) => m.text)).toEqual(["✅ search (1.2s)"]);
  });

  it("shows the typing indicator in the reply thread", async () => {
    started = await startHarness();
    const { target, posted } = await threadTarget(started);
    await started.h.adapter.port.typing!(target);
    const typing = started.h.emulator.calls.filter((c) => c.route === "typing");
    expect(typing.map((c) => c.path)).toEqual([`/api/v10/channels/${posted.threadId}/typing`]);
    expect(started.h.emulator.calls.filter((c) => c.route === "startThread")).toHaveLength(1);
  });

  it("starts the thread once even when typing and a reply race", async () => {
    started = await startHarness();
    const { target } = await threadTarget(started);
    await Promise.all([started.h.adapter.port.typing!(target), started.h.adapter.port.send(target, { text: "hi" })]);
    expect(started.h.emulator.calls.filter((c) => c.route === "startThread").map((c) => c.status)).toEqual([201]);
  });
});
