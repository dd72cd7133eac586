import { describe, expect, it } from "vitest";
import { TargetQueue } from "../../src/delivery/target-queue.ts";
import { createObserver } from "../../src/observe/observer.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import type { OutboundPort } from "../../src/ports.ts";
import { waitUntil } from "../support/wait.ts";

function recordingPort() {
  const messages: Array<{ id: string; text: string; edits: number }> = [];
  const port: OutboundPort = {
    async send(_t, m) {
      const id = String(messages.length + 1);
      messages.push({ id, text: m.text, edits: 0 });
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

describe("progress edited in place", () => {
  it("grows one progress message until the answer, then starts a new one", async () => {
    const { port, messages } = recordingPort();
    const log = silentLogger();
    const q = new TargetQueue({
      port, target: { channel: "t", conversationId: "c" }, maxMessageChars: 4096, minIntervalMs: 5, log, observer: createObserver(log), progressMode: "edit",
    });
    q.progress("⏳ shell: ls");
    await q.drained();
    q.progress("✅ shell (0.1s)");
    await q.drained();
    await q.text("Here are the files.");
    q.progress("⏳ read_file: a.txt");
    await waitUntil(() => expect(messages).toHaveLength(3));
    expect(messages[0]).toMatchObject({ text: "⏳ shell: ls\n✅ shell (0.1s)", edits: 1 });
    expect(messages[1]!.text).toBe("Here are the files.");
    expect(messages[2]!.text).toBe("⏳ read_file: a.txt");
  });
});

describe("pacing per target", () => {
  it("uses the adapter's stricter interval for some targets", async () => {
    const { Delivery } = await import("../../src/delivery/delivery.ts");
    const log = silentLogger();
    const { port } = recordingPort();
    const sentAt: Record<string, number[]> = { group: [], private: [] };
    const timed: OutboundPort = {
      async send(target, m) {
        sentAt[target.conversationId.startsWith("-") ? "group" : "private"]!.push(Date.now());
        return port.send(target, m);
      },
    };
    const delivery = new Delivery(log, createObserver(log));
    delivery.addChannel("t", { port: timed, maxMessageChars: 4096, pacing: { minIntervalMs: 20, intervalFor: (t) => (t.conversationId.startsWith("-") ? 200 : 20) } });
    for (const id of ["-100", "42"]) {
      await delivery.send({ channel: "t", conversationId: id }, "one");
      await delivery.send({ channel: "t", conversationId: id }, "two");
    }
    expect(sentAt.group![1]! - sentAt.group![0]!).toBeGreaterThanOrEqual(190);
    expect(sentAt.private![1]! - sentAt.private![0]!).toBeLessThan(150);
  });
});

describe("an answer the platform keeps failing", () => {
  it("is retried past the usual attempts and delivered once the platform recovers", async () => {
    const log = silentLogger();
    let failures = 0;
    const delivered: string[] = [];
    const flaky: OutboundPort = {
      async send(_t, m) {
        if (m.kind === "reply" && failures < 6) {
          failures++;
          throw Object.assign(new Error("Bad Gateway"), { status: 502 });
        }
        delivered.push(m.text);
        return { id: String(delivered.length) };
      },
    };
    const q = new TargetQueue({
      port: flaky, target: { channel: "t", conversationId: "c" }, maxMessageChars: 4096, minIntervalMs: 0, log, observer: createObserver(log), retryBaseMs: 2,
    });
    await q.text("the final answer");
    expect(failures).toBe(6);
    expect(delivered).toEqual(["the final answer"]);
  });

  it("posts a pile of identical notices once, saying how many", async () => {
    const { collapseRepeats } = await import("../../src/delivery/target-queue.ts");
    expect(collapseRepeats(["⏳ Queued", "⏳ Queued", "⏳ Queued", "✅ done", "⏳ Queued"])).toEqual(["⏳ Queued (×3)", "✅ done", "⏳ Queued"]);
  });
});

describe("a send the platform refuses for good", () => {
  it("is not retried", async () => {
    const log = silentLogger();
    let calls = 0;
    const refusing: OutboundPort = {
      async send() {
        calls++;
        throw Object.assign(new Error("An API error occurred: channel_not_found"), { code: "slack_webapi_platform_error" });
      },
    };
    const q = new TargetQueue({
      port: refusing, target: { channel: "t", conversationId: "gone" }, maxMessageChars: 4096, minIntervalMs: 0, log, observer: createObserver(log), retryBaseMs: 2,
    });
    await expect(q.text("hello")).rejects.toThrow(/channel_not_found/);
    expect(calls).toBe(1);
  });
});

describe("limits shared by several targets", () => {
  it("space the sends to two topics of one chat by the chat's interval", async () => {
    const { Delivery } = await import("../../src/delivery/delivery.ts");
    const log = silentLogger();
    const sentAt: number[] = [];
    const port: OutboundPort = {
      async send() {
        sentAt.push(Date.now());
        return { id: String(sentAt.length) };
      },
    };
    const delivery = new Delivery(log, createObserver(log));
    delivery.addChannel("t", { port, maxMessageChars: 4096, pacing: { minIntervalMs: 0, sharedLimits: (t) => [{ key: `chat:${t.conversationId}`, intervalMs: 150 }] } });
    await Promise.all([
      delivery.send({ channel: "t", conversationId: "-100", threadId: "1" }, "topic one"),
      delivery.send({ channel: "t", conversationId: "-100", threadId: "2" }, "topic two"),
      delivery.send({ channel: "t", conversationId: "-100", threadId: "3" }, "topic three"),
    ]);
    sentAt.sort((a, b) => a - b);
    expect(sentAt[1]! - sentAt[0]!).toBeGreaterThanOrEqual(140);
    expect(sentAt[2]! - sentAt[1]!).toBeGreaterThanOrEqual(140);
  });
});
