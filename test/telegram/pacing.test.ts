import { afterEach, describe, expect, it } from "vitest";
import { createTelegramAdapter } from "../../adapters/telegram/index.ts";
import { Delivery } from "../../src/delivery/delivery.ts";
import type { ReplyTarget } from "../../src/envelope.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { createObserver, type ObserverEvent } from "../../src/observe/observer.ts";
import { RateLimitedError, type OutboundPort } from "../../src/ports.ts";
import { waitUntil } from "../support/wait.ts";
import { createTelegramHarness, type TelegramHarness } from "./harness.ts";

const log = silentLogger();
const chatTarget = (id: number, threadId?: string): ReplyTarget => ({ channel: "telegram", conversationId: String(id), ...(threadId ? { threadId } : {}) });

let h: TelegramHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Delivery over the real adapter's port and pacing, against the emulator (the adapter is not started: sending needs no updates). */
async function deliveryOverEmulator() {
  h = await createTelegramHarness();
  const events: ObserverEvent[] = [];
  const observer = createObserver(log);
  observer.listen((e) => events.push(e));
  const delivery = new Delivery(log, observer);
  delivery.addChannel("telegram", { port: h.adapter.port, maxMessageChars: 4096, pacing: h.adapter.pacing });
  return { h, delivery, events };
}

describe("telegram pacing", () => {
  it("a 429 in one chat does not delay answers in another chat", async () => {
    const { h, delivery, events } = await deliveryOverEmulator();
    for (const id of [5001, 5002]) h.emulator.state.rememberChat({ id, type: "private", first_name: `User ${id}` });
    h.emulator.failNext("sendMessage", { status: 429, retryAfter: 2 });
    const toA = delivery.send(chatTarget(5001), "answer for A");
    await waitUntil(() => expect(h.emulator.callsOf("sendMessage").map((c) => c.status)).toEqual([429]));

    await delivery.send(chatTarget(5002), "answer for B");
    expect(h.emulator.botMessages(5002).map((m) => m.text)).toEqual(["answer for B"]);
    expect(h.emulator.botMessages(5001)).toEqual([]);

    await toA;
    expect(h.emulator.botMessages(5001).map((m) => m.text)).toEqual(["answer for A"]);
    const [limited, ...rest] = h.emulator.callsOf("sendMessage");
    const retried = rest.find((c) => c.params.chat_id === 5001)!;
    expect(retried.at - limited!.at).toBeGreaterThanOrEqual(1950);
    expect(events.filter((e) => e.event === "delivery.rate_limited")).toEqual([expect.objectContaining({ target: "5001", scope: "conversation", retryAfterMs: 2000 })]);
  });

  it("keeps no limit shared by two chats, only one per chat across its topics", () => {
    const adapter = createTelegramAdapter({ token: "123:abc" });
    const keys = (t: ReplyTarget) => (adapter.pacing.sharedLimits?.(t) ?? []).map((l) => l.key);
    expect(keys(chatTarget(-1001, "7"))).toEqual(keys(chatTarget(-1001, "8")));
    const [a, b, c] = [keys(chatTarget(41)), keys(chatTarget(42)), keys(chatTarget(-1001, "7"))];
    for (const [x, y] of [[a, b], [a, c], [b, c]] as const) expect(x!.filter((k) => y!.includes(k))).toEqual([]);
  });

  it("two chats each get their messages without a bot-wide gap", async () => {
    const adapter = createTelegramAdapter({ token: "123:abc" });
    const sentAt = new Map<string, number>();
    const port: OutboundPort = {
      async send(target) {
        sentAt.set(target.conversationId, Date.now());
        return { id: String(sentAt.size) };
      },
    };
    const delivery = new Delivery(log, createObserver(log));
    delivery.addChannel("telegram", { port, maxMessageChars: 4096, pacing: adapter.pacing });
    const chats = Array.from({ length: 40 }, (_, i) => 7000 + i);
    await Promise.all(chats.map((id) => delivery.send(chatTarget(id), `hello ${id}`)));
    const times = [...sentAt.values()];
    expect(times).toHaveLength(40);
    // A gap of 34 ms between any two sends would spread these over more than 1.3 s.
    expect(Math.max(...times) - Math.min(...times)).toBeLessThan(600);
  });

  it("sends to a private chat as fast as Telegram takes it, and after a 429 waits exactly as long as Telegram says", async () => {
    const adapter = createTelegramAdapter({ token: "123:abc" });
    const sentAt: number[] = [];
    let calls = 0;
    const port: OutboundPort = {
      async send() {
        calls++;
        if (calls === 3) throw new RateLimitedError(300, "Too Many Requests: retry after 0.3", "conversation");
        sentAt.push(Date.now());
        return { id: String(calls) };
      },
    };
    const delivery = new Delivery(log, createObserver(log));
    delivery.addChannel("telegram", { port, maxMessageChars: 4096, pacing: adapter.pacing });
    await Promise.all([delivery.send(chatTarget(41), "one"), delivery.send(chatTarget(41), "two")]);
    expect(sentAt[1]! - sentAt[0]!).toBeLessThan(500);
    await Promise.all([delivery.send(chatTarget(41), "three"), delivery.send(chatTarget(41), "four")]);
    expect(sentAt[2]! - sentAt[1]!).toBeGreaterThanOrEqual(290);
    expect(sentAt[3]! - sentAt[2]!).toBeLessThan(500);
  });

  it("keeps a group at its documented 20 messages a minute", async () => {
    const adapter = createTelegramAdapter({ token: "123:abc" });
    const sentAt: number[] = [];
    const port: OutboundPort = {
      async send() {
        sentAt.push(Date.now());
        return { id: String(sentAt.length) };
      },
    };
    const delivery = new Delivery(log, createObserver(log));
    delivery.addChannel("telegram", { port, maxMessageChars: 4096, pacing: adapter.pacing });
    await Promise.all([delivery.send(chatTarget(-100777), "one"), delivery.send(chatTarget(-100777), "two")]);
    expect(sentAt[1]! - sentAt[0]!).toBeGreaterThanOrEqual(2990);
  });
});
