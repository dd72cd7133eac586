import { afterEach, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { DATABASE_FILE } from "../../src/store/sqlite-store.ts";
import { eventually, quietFor } from "../support/bot.ts";
import { callTools, countingTool, heldTool, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";
import type { ChatRequestBody } from "../emulators/openai/index.ts";

const WRITE = (file: string) => callTools({ name: "write_file", args: { path: file, content: `content of ${file}` } });
const toolResults = (body: ChatRequestBody) =>
  ((body.messages as Array<{ role: string; content: string }>) ?? []).filter((m) => m.role === "tool").map((m) => m.content);

describe("parked turns", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("answers a tenth chat at once while nine cards wait (more than the eight slots)", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.gateway.maxConcurrentTurns = 8) });
    const routes = Array.from({ length: 9 }, (_, i) => ({ when: `save file ${i}`, first: WRITE(`f${i}.txt`), then: { text: `saved ${i}` } }));
    routeModel(mb.tb.model, routes);
    for (let i = 0; i < 9; i++) await mb.channel.say(`save file ${i}`, { conversationId: `room-${i}` });
    await eventually(() => mb!.channel.openCards().length === 9 || undefined, "nine cards");
    const other = await mb.channel.say("what is the plan", { conversationId: "room-other" });
    await mb.waitFor(other, "answer to: [u-alice] what is the plan", 5000);
    expect(mb.tb.bot.gateway.status()).toMatchObject({ runningTurns: 0, parkedTurns: 9 });
  });

  it("keeps a card live across a restart: a click afterwards runs the tool once and answers in the thread", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.approval.timeoutMs = 60_000) });
    routeModel(mb.tb.model, [{ when: "write the report", first: WRITE("report.txt"), then: { text: "the report is written" } }]);
    const env = await mb.channel.say("write the report");
    const card = (await eventually(() => mb!.channel.openCards()[0], "the card")).card!;

    await mb.tb.restart();
    await quietFor(300);
    expect(mb.channel.openCards().map((m) => m.card!.approvalId)).toEqual([card.approvalId]);

    const outcome = await mb.channel.click(card.approvalId, "approve", "u-alice", "Alice");
    expect(outcome.status).toBe("accepted");
    await mb.waitFor(env, "the report is written");
    const file = path.join(mb.tb.dataDir, "workspace", "report.txt");
    expect(readFileSync(file, "utf8")).toBe("content of report.txt");
    const again = await mb.channel.click(card.approvalId, "approve", "u-alice", "Alice");
    expect(again.status).toBe("already-decided");
    expect(mb.texts(env).filter((t) => t.includes("the report is written"))).toHaveLength(1);
    const closed = mb.channel.messages.find((m) => m.card?.approvalId === card.approvalId)!;
    expect(closed.resolution?.text).toMatch(/Approved by Alice/);
  });

  it("goes on in the same status message after a restart, and forgets it once the turn is done", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.approval.timeoutMs = 60_000) });
    routeModel(mb.tb.model, [{ when: "write the plan", first: WRITE("plan.txt"), then: { text: "the plan is written" } }]);
    const env = await mb.channel.say("write the plan");
    const card = (await eventually(() => mb!.channel.openCards()[0], "the card")).card!;
    const statuses = () => mb!.channel.messagesIn(env.replyTo.conversationId, env.replyTo.threadId).filter((m) => m.kind === "progress");
    await eventually(() => statuses()[0]?.text.includes("waiting for approval"), "the status message");
    await quietFor(200);

    await mb.tb.restart();
    expect((await mb.channel.click(card.approvalId, "approve", "u-alice", "Alice")).status).toBe("accepted");
    await mb.waitFor(env, "the plan is written");
    await eventually(() => statuses()[0]?.text.includes("1 step in"), "the summary in the status message", 5000);
    expect(statuses()).toHaveLength(1);
    expect(statuses()[0]!.text).toMatch(/🔓 write_file: approved by Alice[\s\S]*✅ write_file/);
    await eventually(async () => (await mb!.tb.bot.store.listValues("progress:")).length === 0 || undefined, "the kept progress forgotten");
  });

  it("keeps a message queued behind a parked turn across a restart and answers it after the resumed turn", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.approval.timeoutMs = 60_000) });
    routeModel(mb.tb.model, [{ when: "write the agenda", first: WRITE("agenda.txt"), then: { text: "the agenda is written" } }]);
    const env = await mb.channel.say("write the agenda");
    const card = (await eventually(() => mb!.channel.openCards()[0], "the card")).card!;
    const later = await mb.channel.say("who is coming", { threadId: env.conversation.threadId });
    await mb.waitFor(later, "Queued");

    await mb.tb.restart();
    await mb.waitFor(later, "I'll answer this as soon as I'm back");
    expect((await mb.channel.click(card.approvalId, "approve", "u-alice", "Alice")).status).toBe("accepted");
    const written = await mb.waitFor(env, "the agenda is written");
    const answered = await mb.waitFor(later, "answer to: [u-alice] who is coming");
    expect(mb.channel.messages.indexOf(written)).toBeLessThan(mb.channel.messages.indexOf(answered));
    expect(mb.texts(env).join("\n")).not.toMatch(/send it again|was not finished/);
  });

  it("shows the decision on a card whose message id was never recorded (posted just before a crash)", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.approval.timeoutMs = 60_000) });
    routeModel(mb.tb.model, [{ when: "write the notes", first: WRITE("notes.txt"), then: { text: "the notes are written" } }]);
    const env = await mb.channel.say("write the notes");
    const card = (await eventually(() => mb!.channel.openCards()[0], "the card")).card!;
    const db = new DatabaseSync(path.join(mb.tb.dataDir, DATABASE_FILE));
    db.prepare("UPDATE approvals SET card_message_id = NULL WHERE id = ?").run(card.approvalId);
    db.close();

    await mb.tb.restart();
    expect((await mb.channel.click(card.approvalId, "approve", "u-alice", "Alice")).status).toBe("accepted");
    await mb.waitFor(env, "the notes are written");
    const closed = mb.channel.messages.find((m) => m.card?.approvalId === card.approvalId)!;
    await eventually(() => closed.resolution, "the card shows the decision", 5000);
    expect(closed.resolution?.text).toMatch(/Approved by Alice/);
  });

  it("tells the thread an approval timed out while the bot was down, and gives the model the timeout", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.approval.timeoutMs = 1000) });
    routeModel(mb.tb.model, [{ when: "write the log", first: WRITE("log.txt"), then: { text: "I could not write the log" } }]);
    const env = await mb.channel.say("write the log");
    const card = (await eventually(() => mb!.channel.openCards()[0], "the card")).card!;
    await mb.tb.bot.stop();
    await quietFor(1500);
    await mb.tb.restart();

    await mb.waitFor(env, "I could not write the log");
    const last = mb.tb.model.requests.at(-1)!.body;
    expect(toolResults(last).at(-1)).toMatch(/timed out waiting for approval/);
    const closed = mb.channel.messages.find((m) => m.card?.approvalId === card.approvalId)!;
    expect(closed.resolution?.outcome).toBe("expired");
    expect(existsSync(path.join(mb.tb.dataDir, "workspace", "log.txt"))).toBe(false);
    const statuses = () => mb!.channel.messagesIn(env.replyTo.conversationId, env.replyTo.threadId).filter((m) => m.kind === "progress");
    await eventually(() => statuses()[0]?.text.includes("0 steps in"), "the summary in the status message", 5000);
    expect(statuses()).toHaveLength(1);
    expect(statuses()[0]!.text).not.toMatch(/waiting for approval/);
  });

  it("ends a parked turn on /stop: the card loses its buttons and nothing runs", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.approval.timeoutMs = 60_000) });
    routeModel(mb.tb.model, [{ when: "write the memo", first: WRITE("memo.txt"), then: { text: "memo written" } }]);
    const env = await mb.channel.say("write the memo");
    const card = (await eventually(() => mb!.channel.openCards()[0], "the card")).card!;
    await mb.channel.say("/stop", { threadId: env.conversation.threadId });
    await mb.waitFor(env, "waits for approval of write_file");
    await mb.waitFor(env, "Stopped.");
    await eventually(() => mb!.channel.openCards().length === 0 || undefined, "the card closed");
    const closed = mb.channel.messages.find((m) => m.card?.approvalId === card.approvalId)!;
    expect(closed.resolution?.outcome).toBe("cancelled");
    expect(await mb.channel.click(card.approvalId, "approve", "u-alice")).toEqual({
      status: "expired", message: "This request was cancelled (stopped, or the conversation started over); nothing was run.",
    });
    expect(existsSync(path.join(mb.tb.dataDir, "workspace", "memo.txt"))).toBe(false);
    expect(mb.texts(env).join("\n")).not.toMatch(/memo written/);
  });

  it("ends a turn parked before a restart on /stop after it, and on /new: nothing runs", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.approval.timeoutMs = 60_000) });
    routeModel(mb.tb.model, [
      { when: "write the memo", first: WRITE("memo.txt"), then: { text: "memo written" } },
      { when: "write the note", first: WRITE("note.txt"), then: { text: "note written" } },
    ]);
    const memo = await mb.channel.say("write the memo");
    const note = await mb.channel.say("write the note", { conversationId: "room-2" });
    await eventually(() => mb!.channel.openCards().length === 2 || undefined, "two cards");
    const cardIn = (env: typeof memo) => mb!.channel.openCards().find((m) => m.conversationId === env.replyTo.conversationId)!.card!;
    const cards = [cardIn(memo), cardIn(note)];
    await mb.tb.restart();
    await quietFor(300);
    await mb.channel.say("/stop", { threadId: memo.conversation.threadId });
    await mb.waitFor(memo, "Stopped.");
    await mb.channel.say("/new", { conversationId: "room-2", threadId: note.conversation.threadId });
    await mb.waitFor(note, "Cancelled the task waiting for approval of write_file");
    await eventually(() => mb!.channel.openCards().length === 0 || undefined, "both cards closed");
    for (const card of cards) expect((await mb.channel.click(card.approvalId, "approve", "u-alice")).status).toBe("expired");
    await quietFor(200);
    expect(existsSync(path.join(mb.tb.dataDir, "workspace", "memo.txt"))).toBe(false);
    expect(existsSync(path.join(mb.tb.dataDir, "workspace", "note.txt"))).toBe(false);
    expect(mb.tb.bot.gateway.status()).toMatchObject({ runningTurns: 0, parkedTurns: 0 });
  });

  it("queues a message sent in a thread whose turn is parked, and answers it after the resumed turn", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.approval.timeoutMs = 60_000) });
    routeModel(mb.tb.model, [{ when: "write the plan", first: WRITE("plan.txt"), then: { text: "plan written" } }]);
    const env = await mb.channel.say("write the plan");
    const card = (await eventually(() => mb!.channel.openCards()[0], "the card")).card!;
    const next = await mb.channel.say("and what next", { threadId: env.conversation.threadId });
    await mb.waitFor(next, "Queued");
    await quietFor(200);
    expect(mb.texts(env).join("\n")).not.toMatch(/answer to: .*and what next/);
    await mb.channel.click(card.approvalId, "approve", "u-alice");
    await mb.waitFor(next, "answer to: [u-alice] and what next");
    const texts = mb.texts(env);
    expect(texts.findIndex((t) => t.includes("plan written"))).toBeLessThan(texts.findIndex((t) => t.includes("answer to: [u-alice] and what next")));
  });

  it("cancels a parked turn on /new and starts fresh without it", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } }, configure: (c) => void (c.approval.timeoutMs = 60_000) });
    routeModel(mb.tb.model, [{ when: "write the draft", first: WRITE("draft.txt"), then: { text: "draft written" } }]);
    const env = await mb.channel.say("write the draft");
    const card = (await eventually(() => mb!.channel.openCards()[0], "the card")).card!;
    await mb.channel.say("/new", { threadId: env.conversation.threadId });
    await mb.waitFor(env, "Cancelled the task waiting for approval of write_file");
    await eventually(() => mb!.channel.openCards().length === 0 || undefined, "the card closed");
    expect((await mb.channel.click(card.approvalId, "approve", "u-alice")).status).toBe("expired");
    const sessionKey = `memory:room-1:${env.conversation.threadId}`;
    await quietFor(200);
    expect(await mb.tb.bot.store.loadHistory(sessionKey, 10)).toEqual([]);
  });
});

describe("a deploy loses no work", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("continues a turn stopped between two tool calls after the restart, and answers once", async () => {
    const hold = heldTool("step_one");
    const two = countingTool("step_two");
    mb = await startMemoryBot({ tools: [hold.tool, two.tool] });
    routeModel(mb.tb.model, [{ when: "do both steps", first: callTools({ name: "step_one" }, { name: "step_two" }), then: { text: "both steps done" } }]);
    const env = await mb.channel.say("do both steps");
    await hold.started();
    const stopping = mb.tb.bot.stop();
    await quietFor(100);
    hold.release();
    await stopping;
    expect(two.runs).toBe(0);
    expect(mb.texts(env).join("\n")).not.toMatch(/both steps done|restarting/);

    await mb.tb.restart();
    await mb.waitFor(env, "both steps done");
    expect(hold.starts).toBe(1);
    expect(two.runs).toBe(1);
    const results = toolResults(mb.tb.model.requests.at(-1)!.body);
    expect(results).toEqual(["step_one finished", "step_two ran"]);
    await quietFor(200);
    expect(mb.texts(env).filter((t) => t.includes("both steps done"))).toHaveLength(1);
    // One status message for the task, before and after the restart.
    const statuses = () => mb!.channel.messagesIn(env.replyTo.conversationId, env.replyTo.threadId).filter((m) => m.kind === "progress");
    await eventually(() => statuses()[0]?.text.includes("2 steps in"), "the summary in the status message", 5000);
    expect(statuses()).toHaveLength(1);
  });

  it("reports a tool still running when the shutdown grace ran out as interrupted, and never runs it again", async () => {
    const hold = heldTool("long_step");
    mb = await startMemoryBot({ tools: [hold.tool], configure: (c) => void (c.gateway.shutdownGraceMs = 200) });
    routeModel(mb.tb.model, [{ when: "run the long step", first: callTools({ name: "long_step" }), then: { text: "the long step is over" } }]);
    const env = await mb.channel.say("run the long step");
    await hold.started();
    await mb.tb.restart();
    await mb.waitFor(env, "the long step is over");
    expect(hold.starts).toBe(1);
    expect(toolResults(mb.tb.model.requests.at(-1)!.body).at(-1)).toMatch(/interrupted by a restart/);
  });
});
