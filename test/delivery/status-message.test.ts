import { describe, expect, it } from "vitest";
import { Delivery } from "../../src/delivery/delivery.ts";
import { progressStyleFor, type ProgressStyle } from "../../src/delivery/task-progress.ts";
import type { TurnEvent } from "../../src/engine/types.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { createObserver } from "../../src/observe/observer.ts";
import { readableDuration, summaryLine } from "../../src/observe/progress.ts";
import type { DeliveryPacing, OutboundPort } from "../../src/ports.ts";
import { waitUntil } from "../support/wait.ts";

interface Posted {
  id: string;
  thread?: string;
  text: string;
  kind?: string;
}

function recordingPort(options: { canEdit?: boolean; failEdits?: boolean } = {}) {
  const messages: Posted[] = [];
  const edits: Array<{ id: string; text: string; at: number }> = [];
  const port: OutboundPort = {
    async send(target, m) {
      const id = String(messages.length + 1);
      messages.push({ id, thread: target.threadId, text: m.text, kind: m.kind });
      return { id };
    },
  };
  if (options.canEdit !== false) {
    port.edit = async (_t, id, m) => {
      edits.push({ id, text: m.text, at: Date.now() });
      if (options.failEdits) throw Object.assign(new Error("An API error occurred: message_not_found"), { code: "slack_webapi_platform_error" });
      messages.find((x) => x.id === id)!.text = m.text;
    };
  }
  return { port, messages, edits };
}

function setup(pacing: DeliveryPacing = { minIntervalMs: 0 }, progress?: ProgressStyle, portOptions?: Parameters<typeof recordingPort>[0]) {
  const log = silentLogger();
  const recorded = recordingPort(portOptions);
  const delivery = new Delivery(log, createObserver(log));
  delivery.addChannel("t", { port: recorded.port, maxMessageChars: 2000, pacing, progress });
  return { delivery, ...recorded };
}

const target = (thread = "th") => ({ channel: "t", conversationId: "c", threadId: thread });
const start = (n: number, tool = "step"): TurnEvent => ({ type: "tool.start", callId: `c${n}`, tool, hint: `part ${n}` });
const finish = (n: number, success = true, tool = "step"): TurnEvent => ({
  type: "tool.finish", callId: `c${n}`, tool, ms: 1200, success, ...(success ? {} : { error: "it broke" }),
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the live status message of a task", () => {
  it("is posted at the first tool call and edited as calls start and finish", async () => {
    const { delivery, messages } = setup();
    const task = delivery.taskProgress(target());
    task.event(start(1));
    await waitUntil(() => expect(messages.map((m) => m.text)).toEqual(["⏳ step: part 1"]));
    task.event(finish(1));
    task.event(start(2));
    await waitUntil(() => expect(messages.map((m) => m.text)).toEqual(["✅ step (1.2s)\n⏳ step: part 2"]));
    expect(messages[0]).toMatchObject({ thread: "th", kind: "progress" });
  });

  it("is closed with a one-line summary, and the answer is a message of its own", async () => {
    const { delivery, messages } = setup();
    const task = delivery.taskProgress(target());
    task.event(start(1));
    task.event(finish(1));
    task.event(start(2));
    task.event(finish(2, false));
    const shown = task.finish("done");
    await delivery.send(target(), "Here is what I found.");
    await shown;
    expect(messages).toHaveLength(2);
    expect(messages[0]!.text).toMatch(/^✅ step \(1\.2s\)\n❌ step \(1\.2s\): it broke\n✅ 2 steps in \d\.\d s · 1 failed$/);
    expect(messages[1]!.text).toBe("Here is what I found.");
  });

  it("coalesces a burst of events into the edits its budget allows, and ends in the latest state", async () => {
    const { delivery, messages, edits } = setup({ minIntervalMs: 0, editLimits: () => [{ key: "edits", intervalMs: 200 }] });
    const task = delivery.taskProgress(target());
    const began = Date.now();
    for (let n = 1; n <= 50; n++) {
      task.event(start(n));
      task.event(finish(n));
      await sleep(20);
    }
    await task.finish("done");
    const elapsed = Date.now() - began;
    expect(messages).toHaveLength(1);
    expect(edits.length).toBeLessThanOrEqual(Math.ceil(elapsed / 200) + 1);
    for (let i = 1; i < edits.length; i++) expect(edits[i]!.at - edits[i - 1]!.at).toBeGreaterThanOrEqual(190);
    expect(messages[0]!.text).toMatch(/^… 35 earlier lines\n(✅ step \(1\.2s\)\n){15}✅ 50 steps in \d\.\d s$/);
  });

  it("shares an edit limit the platform sets for many threads (Slack's chat.update per workspace)", async () => {
    const { delivery, edits } = setup({ minIntervalMs: 0, editLimits: () => [{ key: "workspace", intervalMs: 150 }] });
    const tasks = [delivery.taskProgress(target("a")), delivery.taskProgress(target("b"))];
    for (let n = 1; n <= 6; n++) {
      for (const task of tasks) task.event(start(n));
      await sleep(40);
      for (const task of tasks) task.event(finish(n));
    }
    await Promise.all(tasks.map((t) => t.finish("done")));
    const times = edits.map((e) => e.at).sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(140);
  });

  it("shows the latest progress a running tool reported", async () => {
    const { delivery, messages } = setup();
    const task = delivery.taskProgress(target());
    task.event(start(1, "index"));
    for (let i = 1; i <= 20; i++) task.event({ type: "tool.progress", callId: "c1", tool: "index", text: `page ${i} of 20` });
    await waitUntil(() => expect(messages[0]?.text).toBe("⏳ index: page 20 of 20"));
  });

  it("shows a call waiting for approval with a link to its card, then who denied it", async () => {
    const { delivery, messages } = setup();
    const task = delivery.taskProgress(target());
    task.event({ type: "approval.waiting", callId: "w1", tool: "write_file" });
    await waitUntil(() => expect(messages[0]?.text).toBe("🔐 write_file: waiting for approval"));
    task.cardLink("https://chat.example/card/1");
    await waitUntil(() => expect(messages[0]?.text).toBe("🔐 write_file: waiting for approval · [open the card](https://chat.example/card/1)"));
    task.decided({ outcome: "denied", by: { id: "u1", name: "Ada" }, source: "backchannel" });
    await task.finish("done");
    expect(messages[0]!.text).toMatch(/^🚫 write_file: denied by Ada\n✅ 0 steps in \d\.\d s · 1 approval · 1 denied$/);
  });

  it("is taken over by another process from a snapshot, which goes on editing the same message", async () => {
    const first = setup();
    const task = first.delivery.taskProgress(target());
    task.event(start(1));
    task.event(finish(1));
    task.event({ type: "approval.waiting", callId: "w1", tool: "write_file" });
    const snapshot = await task.snapshot!();
    await waitUntil(() => expect(first.messages[0]?.text).toBe("✅ step (1.2s)\n🔐 write_file: waiting for approval"));
    expect(snapshot).toBeDefined();

    // The restarted process: the same platform messages, a new Delivery.
    const second = setup();
    second.messages.push(...first.messages);
    const resumed = second.delivery.taskProgress(target(), undefined, snapshot);
    resumed.decided({ outcome: "approved", by: { id: "u1", name: "Ada" }, source: "backchannel" });
    resumed.event(start(2, "write_file"));
    resumed.event(finish(2, true, "write_file"));
    await resumed.finish("done");
    expect(second.messages).toHaveLength(1);
    expect(second.messages[0]!.text).toMatch(/^✅ step \(1\.2s\)\n🔓 write_file: approved by Ada\n✅ write_file \(1\.2s\)\n✅ 2 steps in .* · 1 approval$/);
  });

  it("has no snapshot before its message is posted, and ignores one it cannot read", async () => {
    const { delivery, messages } = setup();
    expect(await delivery.taskProgress(target()).snapshot!()).toBeUndefined();
    for (const bad of ["not json", "{}", JSON.stringify({ version: 2, messageId: "1", startedAt: 0, entries: [], tally: {} })]) {
      const task = delivery.taskProgress(target(bad), undefined, bad);
      task.event(start(1));
      await waitUntil(() => expect(messages.filter((m) => m.thread === bad)).toHaveLength(1));
    }
  });

  it("drops a wait nobody had to answer once the call goes on", async () => {
    const { delivery, messages } = setup();
    const task = delivery.taskProgress(target());
    task.event({ type: "approval.waiting", callId: "c1", tool: "step" });
    task.event(start(1));
    task.event(finish(1));
    await task.finish("done");
    expect(messages[0]!.text).toMatch(/^✅ step \(1\.2s\)\n✅ 1 step in \d\.\d s$/);
  });

  it("says a stopped task stopped, with the call that did not finish", async () => {
    const { delivery, messages } = setup();
    const task = delivery.taskProgress(target());
    task.event(start(1));
    await task.finish("cancelled");
    expect(messages[0]!.text).toMatch(/^⏹ step: not finished\n⏹ Stopped after 0 steps in \d\.\d s$/);
  });

  it("posts no status message for a task without tool calls; a notice before any step is a line of its own", async () => {
    const { delivery, messages } = setup();
    const task = delivery.taskProgress(target());
    task.event({ type: "notice", text: "🗜️ Summarized 12 earlier messages of this conversation." });
    await task.finish("done");
    await delivery.flush();
    expect(messages.map((m) => m.text)).toEqual(["🗜️ Summarized 12 earlier messages of this conversation."]);
  });

  it("gives up a message the platform no longer lets it edit, and still lets the task end", async () => {
    const { delivery, messages, edits } = setup({ minIntervalMs: 0 }, undefined, { failEdits: true });
    const task = delivery.taskProgress(target());
    task.event(start(1));
    await waitUntil(() => expect(messages).toHaveLength(1));
    for (let n = 1; n <= 5; n++) {
      task.event(finish(n));
      task.event(start(n + 1));
      await sleep(30);
    }
    await task.finish("done");
    await sleep(100);
    expect(edits.length).toBeGreaterThan(0);
    expect(edits.length).toBeLessThanOrEqual(3);
  });
});

describe("the other progress styles", () => {
  it('"lines" posts progress lines as messages, as before', async () => {
    const { delivery, messages, edits } = setup({ minIntervalMs: 0 }, "lines");
    const task = delivery.taskProgress(target());
    task.event(start(1));
    await waitUntil(() => expect(messages).toHaveLength(1));
    task.event(finish(1));
    await task.finish("done");
    await waitUntil(() => expect(messages.map((m) => m.text)).toEqual(["⏳ step: part 1", "✅ step (1.2s)"]));
    expect(edits).toEqual([]);
  });

  it('"off" posts nothing', async () => {
    const { delivery, messages } = setup({ minIntervalMs: 0 }, "off");
    const task = delivery.taskProgress(target());
    task.event(start(1));
    task.event({ type: "approval.waiting", callId: "c2", tool: "write_file" });
    await task.finish("done");
    await delivery.flush();
    expect(messages).toEqual([]);
  });

  it("falls back to lines where the channel cannot edit", async () => {
    const { delivery, messages } = setup({ minIntervalMs: 0 }, "status", { canEdit: false });
    const task = delivery.taskProgress(target());
    task.event(start(1));
    await waitUntil(() => expect(messages.map((m) => m.text)).toEqual(["⏳ step: part 1"]));
  });

  it("takes a channel's own progress key over the global one", () => {
    const config = { progress: "status" as const, slack: { progress: "off" as const }, telegram: {} };
    expect(progressStyleFor(config, "slack")).toBe("off");
    expect(progressStyleFor(config, "telegram")).toBe("status");
    expect(progressStyleFor(config, "console")).toBe("status");
  });
});

describe("the summary line", () => {
  it("counts steps, time, approvals and denials", () => {
    expect(summaryLine({ end: "done", steps: 12, failed: 0, ms: 48_200, approvals: 1, denied: 1, timedOut: 0 })).toBe("✅ 12 steps in 48 s · 1 approval · 1 denied");
    expect(summaryLine({ end: "failed", steps: 1, failed: 1, ms: 400, approvals: 0, denied: 0, timedOut: 1 })).toBe("⚠️ Failed after 1 step in 0.4 s · 1 failed · 1 timed out");
  });

  it("reads durations as people do", () => {
    expect(readableDuration(3240)).toBe("3.2 s");
    expect(readableDuration(185_000)).toBe("3 min 5 s");
    expect(readableDuration(120_000)).toBe("2 min");
  });
});
