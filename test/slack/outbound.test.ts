import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MessageRejectedError, RateLimitedError } from "../../src/ports.ts";
import type { ReplyTarget } from "../../src/envelope.ts";
import { GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";
import { RecordingSink, until } from "./support.ts";

describe("Slack outbound port", () => {
  let h: SlackHarness;
  let target: ReplyTarget;

  beforeEach(async () => {
    h = await createSlackHarness();
    const sink = new RecordingSink();
    await h.adapter.start(sink);
    const posted = await h.userSays("please help");
    const env = await until(() => sink.envelopes[0]);
    target = env.replyTo;
    expect(target.threadId).toBe(posted.messageId);
  });
  afterEach(async () => {
    await h.close();
  });

  it("answers a mention in its thread, converted to mrkdwn", async () => {
    const sent = await h.adapter.port.send(target, { text: "**Done**: see [the log](https://example.com/log?a=1&b=2) & `x<y`" });
    const [reply] = await h.botMessages(GENERAL, target.threadId);
    expect(reply).toMatchObject({ id: sent.id, threadId: target.threadId });
    const raw = h.emulator.world.findMessage(GENERAL, sent.id)!.text;
    expect(raw).toBe("*Done*: see <https://example.com/log?a=1&amp;b=2|the log> &amp; `x&lt;y`");
  });

  it("sends plain text without markup conversion when asked", async () => {
    const sent = await h.adapter.port.send(target, { text: "**not bold** <b>", plain: true });
    expect(h.emulator.world.findMessage(GENERAL, sent.id)!.text).toBe("**not bold** &lt;b&gt;");
  });

  it("never posts a token it knows", async () => {
    const sent = await h.adapter.port.send(target, { text: `the token is ${h.emulator.botToken}` });
    expect(h.emulator.world.findMessage(GENERAL, sent.id)!.text).not.toContain(h.emulator.botToken);
  });

  it("edits a posted message", async () => {
    const sent = await h.adapter.port.send(target, { text: "⏳ working" });
    await h.adapter.port.edit!(target, sent.id, { text: "✅ done" });
    const [msg] = await h.botMessages(GENERAL, target.threadId);
    expect(msg!.text).toBe("✅ done");
  });

  it("rejects a 60,000-character message as too long", async () => {
    const err = await h.adapter.port.send(target, { text: "a".repeat(60_000) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageRejectedError);
    expect((err as MessageRejectedError).reason).toBe("too_long");
    expect(await h.botMessages(GENERAL, target.threadId)).toHaveLength(0);
  });

  it("reports a 429 as RateLimitedError with Slack's advised delay, without retrying itself", async () => {
    h.emulator.failNext("chat.postMessage", { status: 429, retryAfter: 7 });
    const err = await h.adapter.port.send(target, { text: "hi" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(7000);
    expect((err as RateLimitedError).scope).toBe("conversation");
    expect(h.emulator.world.calls.filter((c) => c.method === "chat.postMessage")).toHaveLength(1);
  });

  it("sets and clears the assistant thread status in the thread", async () => {
    await h.adapter.port.typing!(target);
    await h.adapter.port.clearTyping!(target);
    const statuses = h.emulator.world.calls.filter((c) => c.method === "assistant.threads.setStatus");
    expect(statuses.map((c) => c.args)).toEqual([
      { channel_id: GENERAL, thread_ts: target.threadId, status: "is working…" },
      { channel_id: GENERAL, thread_ts: target.threadId, status: "" },
    ]);
  });

  it("carries on when the workspace has no assistant thread status", async () => {
    h.emulator.failNext("assistant.threads.setStatus", { error: "not_allowed_token_type" });
    await expect(h.adapter.port.typing!(target)).resolves.toBeUndefined();
  });
});
