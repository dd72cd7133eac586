import { describe, expect, it } from "vitest";
import { Delivery } from "../../src/delivery/delivery.ts";
import { SendClock } from "../../src/delivery/send-clock.ts";
import type { ReplyTarget } from "../../src/envelope.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { createObserver } from "../../src/observe/observer.ts";
import type { DeliveryPacing, OutboundPort } from "../../src/ports.ts";
import { waitUntil } from "../support/wait.ts";

const log = silentLogger();

function recordingPort() {
  const messages: Array<{ id: string; conversationId: string; text: string; at: number; edits: number }> = [];
  const port: OutboundPort = {
    async send(target, m) {
      const id = String(messages.length + 1);
      messages.push({ id, conversationId: target.conversationId, text: m.text, at: Date.now(), edits: 0 });
      return { id };
    },
    async edit(_t, id, m) {
      const msg = messages.find((x) => x.id === id)!;
      msg.text = m.text;
      msg.edits++;
    },
  };
  return { port, messages };
}

function deliveryFor(port: OutboundPort, pacing: DeliveryPacing): Delivery {
  const delivery = new Delivery(log, createObserver(log));
  delivery.addChannel("t", { port, maxMessageChars: 4096, pacing });
  return delivery;
}

const target = (conversationId: string, threadId?: string): ReplyTarget => ({ channel: "t", conversationId, ...(threadId ? { threadId } : {}) });

describe("delivery memory does not grow with the number of conversations", () => {
  it("keeps no queue for 10,000 targets once their messages are sent", async () => {
    const { port, messages } = recordingPort();
    const delivery = deliveryFor(port, { minIntervalMs: 5, sharedLimits: (t) => [{ key: `chat:${t.conversationId}`, intervalMs: 5 }] });
    for (let batch = 0; batch < 100; batch++) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => delivery.send(target(`c${batch * 100 + i}`, "1"), "hi")));
    }
    expect(messages).toHaveLength(10_000);
    await waitUntil(() => expect(delivery.openQueues).toBe(0));
    // Only pacing times not yet passed are worth keeping (each lasts 5 ms here): of the 20,000 the
    // burst made (a chat's and a target's per send), past ones were swept as it went (how many were
    // still live at a sweep depends on the machine's load); what it left behind goes with the next
    // send a second later.
    expect(delivery.pacingEntries).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 1100));
    await delivery.send(target("one-more"), "hi");
    expect(delivery.pacingEntries).toBeLessThan(10);
  });

  it("forgets pacing times once they have passed, however many keys went through", () => {
    const clock = new SendClock();
    for (let i = 0; i < 10_000; i++) {
      clock.reserve(`chat:${i}`, 5, i);
      clock.holdUntil(`target:${i}`, i + 5, i);
    }
    expect(clock.size).toBeLessThanOrEqual(300);
    expect(clock.freeAt("chat:9999")).toBe(10_004);
  });
});

describe("a queue made again for a target", () => {
  it("still paces from the last send to that target", async () => {
    const { port, messages } = recordingPort();
    const delivery = deliveryFor(port, { minIntervalMs: 400 });
    await delivery.send(target("c"), "one");
    await waitUntil(() => expect(delivery.openQueues).toBe(0));
    await delivery.send(target("c"), "two");
    expect(messages[1]!.at - messages[0]!.at).toBeGreaterThanOrEqual(390);
  });

  it("still takes the shared limit's next slot after the queue of another thread went away", async () => {
    const { port, messages } = recordingPort();
    const delivery = deliveryFor(port, { minIntervalMs: 0, sharedLimits: (t) => [{ key: `chat:${t.conversationId}`, intervalMs: 400 }] });
    await delivery.send(target("-100", "1"), "topic one");
    await waitUntil(() => expect(delivery.openQueues).toBe(0));
    await delivery.send(target("-100", "2"), "topic two");
    expect(messages[1]!.at - messages[0]!.at).toBeGreaterThanOrEqual(390);
  });

  it("posts one target's messages in the order they were queued, across queues", async () => {
    const { port, messages } = recordingPort();
    const delivery = deliveryFor(port, { minIntervalMs: 1 });
    const sends: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      sends.push(delivery.send(target("c"), `m${i}`));
      if (i % 7 === 0) await sends.at(-1);
    }
    await Promise.all(sends);
    expect(messages.map((m) => m.text)).toEqual(Array.from({ length: 30 }, (_, i) => `m${i}`));
  });
});

describe("progress edited in place across a quiet spell", () => {
  it("keeps the queue of an open progress message, so the next line edits it; the answer lets the queue go", async () => {
    const { port, messages } = recordingPort();
    const delivery = deliveryFor(port, { minIntervalMs: 0, progressMode: "edit" });
    delivery.progress(target("c"), "⏳ shell: ls");
    await waitUntil(() => expect(messages).toHaveLength(1));
    // The line is posted and nothing else is queued: the queue idles, keeping its progress message.
    await waitUntil(() => expect(delivery.queue(target("c")).idle).toBe(true));
    expect(delivery.openQueues).toBe(1);
    delivery.progress(target("c"), "✅ shell (0.1s)");
    await waitUntil(() => expect(messages[0]!.edits).toBe(1));
    expect(messages).toHaveLength(1);
    expect(messages[0]!.text).toBe("⏳ shell: ls\n✅ shell (0.1s)");
    await delivery.send(target("c"), "Here are the files.");
    await waitUntil(() => expect(delivery.openQueues).toBe(0));
  });
});
