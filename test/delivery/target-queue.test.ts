import { describe, expect, it } from "vitest";
import { Delivery } from "../../src/delivery/delivery.ts";
import { TargetQueue } from "../../src/delivery/target-queue.ts";
import type { ReplyTarget } from "../../src/envelope.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { createObserver } from "../../src/observe/observer.ts";
import { MemoryChannel } from "../support/memory-channel.ts";

const target: ReplyTarget = { channel: "memory", conversationId: "room-1", threadId: "t-1" };
const log = silentLogger();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function deliveryFor(channel: MemoryChannel, minIntervalMs: number, maxMessageChars = channel.capabilities.maxMessageChars): Delivery {
  const delivery = new Delivery(log, createObserver(log));
  delivery.addChannel(channel.channel, { port: channel.port, maxMessageChars, pacing: { minIntervalMs } });
  return delivery;
}

describe("delivery to one target", () => {
  it("delivers a burst of 50 progress lines to a 1-message-per-second target coalesced, in order, then the answer", async () => {
    // The platform allows one message per second; the bot's pacing is tighter, so it meets 429s and must wait them out.
    const channel = new MemoryChannel({ platformMinGapMs: 1000 });
    const delivery = deliveryFor(channel, 300);
    const lines = Array.from({ length: 50 }, (_, i) => `⏳ step ${i + 1}`);
    for (const line of lines) {
      delivery.progress(target, line);
      await sleep(10);
    }
    await delivery.send(target, "All 50 steps are done.");

    const posted = channel.messagesIn("room-1", "t-1");
    expect(posted.at(-1)!.text).toBe("All 50 steps are done.");
    const progress = posted.slice(0, -1);
    expect(progress.length).toBeLessThanOrEqual(4);
    expect(progress.flatMap((m) => m.text.split("\n"))).toEqual(lines);
    expect(channel.rateLimited.length).toBeGreaterThan(0);
    for (let i = 1; i < posted.length; i++) expect(posted[i]!.sentAt - posted[i - 1]!.sentAt).toBeGreaterThanOrEqual(1000);
  }, 10_000);

  it("waits out repeated 429s for as long as the platform advises, then posts the message once", async () => {
    const channel = new MemoryChannel();
    channel.failWithRateLimit(3, 120);
    const delivery = deliveryFor(channel, 0);
    const started = Date.now();
    await delivery.send(target, "the answer");
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 120 - 10);
    expect(channel.messages.map((m) => m.text)).toEqual(["the answer"]);
    expect(channel.rateLimited).toHaveLength(3);
  });

  it("splits again when the platform refuses a part as too long, losing no text", async () => {
    const channel = new MemoryChannel({ capabilities: { maxMessageChars: 500 } });
    // The queue believes the limit is higher than the platform's real one.
    const delivery = deliveryFor(channel, 0, 2000);
    const text = Array.from({ length: 150 }, (_, i) => `word${i}`).join(" ");
    await delivery.send(target, text);
    expect(channel.rejected.length).toBeGreaterThan(0);
    expect(channel.messages.every((m) => m.text.length <= 500)).toBe(true);
    expect(channel.messages.map((m) => m.text).join(" ").split(/\s+/)).toEqual(text.split(" "));
  });

  it("posts progress, a card and the answer in the order they were queued", async () => {
    const channel = new MemoryChannel();
    const queue = new TargetQueue({ port: channel.port, target, maxMessageChars: 2000, minIntervalMs: 20, log, observer: createObserver(log) });
    queue.progress("⏳ write_file: notes.txt");
    const card = queue.action(() => channel.port.send(target, { text: "🔐 card", kind: "notice" }));
    const answer = queue.text("Done.");
    await Promise.all([card, answer]);
    expect(channel.messages.map((m) => m.text)).toEqual(["⏳ write_file: notes.txt", "🔐 card", "Done."]);
  });

  it("masks secrets in anything it posts", async () => {
    const channel = new MemoryChannel();
    const delivery = deliveryFor(channel, 0);
    await delivery.send(target, "the token is xoxb-123456789012-abcdefghijklmnop, keep it safe");
    expect(channel.messages[0]!.text).not.toContain("xoxb-123456789012-abcdefghijklmnop");
  });
});
