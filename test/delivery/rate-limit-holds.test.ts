import { describe, expect, it } from "vitest";
import { Delivery } from "../../src/delivery/delivery.ts";
import type { ReplyTarget } from "../../src/envelope.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { createObserver, type ObserverEvent } from "../../src/observe/observer.ts";
import { RateLimitedError, type DeliveryPacing, type OutboundPort, type RateLimitScope } from "../../src/ports.ts";

const log = silentLogger();

interface Posted {
  channel: string;
  conversationId: string;
  threadId?: string;
  text: string;
  at: number;
}

/** A port that records what it posted and answers the first send of `limitedText` with a 429 of `scope`. */
function limitingPort(channel: string, posted: Posted[], limit?: { text: string; retryAfterMs: number; scope: RateLimitScope }) {
  let limitedAt: number | undefined;
  const port: OutboundPort = {
    async send(target, m) {
      if (limit && m.text === limit.text && limitedAt === undefined) {
        limitedAt = Date.now();
        throw new RateLimitedError(limit.retryAfterMs, "429", limit.scope);
      }
      posted.push({ channel, conversationId: target.conversationId, ...(target.threadId ? { threadId: target.threadId } : {}), text: m.text, at: Date.now() });
      return { id: String(posted.length) };
    },
  };
  return { port, limitedAt: () => limitedAt };
}

function deliveryWith(channels: Record<string, { port: OutboundPort; pacing?: DeliveryPacing }>) {
  const events: ObserverEvent[] = [];
  const observer = createObserver(log);
  observer.listen((e) => events.push(e));
  const delivery = new Delivery(log, observer);
  for (const [name, c] of Object.entries(channels)) delivery.addChannel(name, { port: c.port, maxMessageChars: 4096, pacing: c.pacing ?? { minIntervalMs: 0 } });
  return { delivery, events };
}

const at = (channel: string, conversationId: string, threadId?: string): ReplyTarget => ({ channel, conversationId, ...(threadId ? { threadId } : {}) });
const texts = (posted: Posted[]) => posted.map((p) => p.text);

describe("a 429 slows only what it names", () => {
  it("a 429 for one conversation does not delay another conversation", async () => {
    const posted: Posted[] = [];
    const chat = limitingPort("t", posted, { text: "to A", retryAfterMs: 600, scope: "conversation" });
    const { delivery, events } = deliveryWith({ t: { port: chat.port } });
    const toA = delivery.send(at("t", "A"), "to A");
    await expect.poll(() => chat.limitedAt()).toBeDefined();
    await delivery.send(at("t", "B"), "to B");
    expect(texts(posted)).toEqual(["to B"]);
    await toA;
    expect(texts(posted)).toEqual(["to B", "to A"]);
    expect(events.find((e) => e.event === "delivery.rate_limited")).toMatchObject({ target: "A", scope: "conversation", retryAfterMs: 600 });
  });

  it("a 429 for a conversation holds its other threads for as long as it says", async () => {
    const posted: Posted[] = [];
    const chat = limitingPort("t", posted, { text: "topic 1", retryAfterMs: 500, scope: "conversation" });
    const { delivery } = deliveryWith({ t: { port: chat.port } });
    const first = delivery.send(at("t", "-100", "1"), "topic 1");
    await expect.poll(() => chat.limitedAt()).toBeDefined();
    await Promise.all([first, delivery.send(at("t", "-100", "2"), "topic 2"), delivery.send(at("t", "-200", "1"), "other chat")]);
    expect(posted[0]!.text).toBe("other chat");
    const topic2 = posted.find((p) => p.text === "topic 2")!;
    expect(topic2.at - chat.limitedAt()!).toBeGreaterThanOrEqual(480);
  });

  it("a 429 for one target holds only that target, not its conversation's other threads", async () => {
    const posted: Posted[] = [];
    const chat = limitingPort("t", posted, { text: "thread 1", retryAfterMs: 600, scope: "target" });
    const { delivery } = deliveryWith({ t: { port: chat.port } });
    const first = delivery.send(at("t", "C", "1"), "thread 1");
    await expect.poll(() => chat.limitedAt()).toBeDefined();
    await delivery.send(at("t", "C", "2"), "thread 2");
    expect(texts(posted)).toEqual(["thread 2"]);
    await first;
    expect(texts(posted)).toEqual(["thread 2", "thread 1"]);
  });

  it("a global 429 holds every conversation of that channel, and no other channel", async () => {
    const posted: Posted[] = [];
    const discord = limitingPort("d", posted, { text: "first", retryAfterMs: 500, scope: "bot" });
    const slack = limitingPort("s", posted);
    const { delivery } = deliveryWith({ d: { port: discord.port }, s: { port: slack.port } });
    const first = delivery.send(at("d", "ch-1"), "first");
    await expect.poll(() => discord.limitedAt()).toBeDefined();
    const otherConversation = delivery.send(at("d", "ch-2"), "same channel, other conversation");
    await delivery.send(at("s", "C1"), "other channel");
    expect(texts(posted)).toEqual(["other channel"]);
    await Promise.all([first, otherConversation]);
    const held = posted.find((p) => p.text === "same channel, other conversation")!;
    expect(held.at - discord.limitedAt()!).toBeGreaterThanOrEqual(480);
  });
});

describe("pacing waits only on the target it belongs to", () => {
  it("a target waiting for its interval does not hold other targets", async () => {
    const posted: Posted[] = [];
    const { port } = limitingPort("t", posted);
    const { delivery } = deliveryWith({ t: { port, pacing: { minIntervalMs: 800 } } });
    const busy = at("t", "busy");
    const sends = [delivery.send(busy, "busy one"), delivery.send(busy, "busy two")];
    for (let i = 0; i < 20; i++) sends.push(delivery.send(at("t", `quiet-${i}`), `quiet ${i}`));
    await Promise.all(sends);
    expect(posted.at(-1)!.text).toBe("busy two");
  });
});
