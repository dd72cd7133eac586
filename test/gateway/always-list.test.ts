import { afterEach, describe, expect, it } from "vitest";
import { MEMORY_ROOM, MEMORY_USER } from "../support/memory-channel.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

describe("/always in a thread", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("lists the thread's decisions, the conversation's and the sender's own, and nothing from elsewhere", async () => {
    mb = await startMemoryBot();
    const first = await mb.channel.say("hello", { userName: "Ann" });
    await mb.waitFor(first, "answer to");
    const thread = `session:memory:${MEMORY_ROOM}:${first.conversation.threadId}`;
    const store = mb.tb.bot.store;
    await store.rememberAlways(`${thread}|sender:memory:${MEMORY_USER}`, "shell", 1_000, { personName: "Ann" });
    await store.rememberAlways(`${thread}|sender:memory:u-bob`, "http_fetch", 2_000, { personName: "Bob" });
    await store.rememberAlways(`conversation:memory:${MEMORY_ROOM}`, "write_file", 3_000);
    await store.rememberAlways(`sender:memory:${MEMORY_USER}`, "list_files", 4_000, { expiresAt: Date.now() + 3 * 3_600_000, personName: "Ann" });
    await store.rememberAlways(`session:memory:${MEMORY_ROOM}:other-thread|sender:memory:${MEMORY_USER}`, "secret_tool", 5_000);
    await store.rememberAlways(`sender:memory:u-bob`, "bobs_tool", 6_000);
    await store.rememberAlways(`${thread}|sender:memory:${MEMORY_USER}`, "expired_tool", 7_000, { expiresAt: Date.now() - 1 });

    await mb.channel.say("/always", { threadId: first.conversation.threadId, userName: "Ann" });
    const list = await mb.waitFor(first, "Remembered");
    expect(list.text.split("\n")).toEqual([
      'Remembered "Always" decisions here (4):',
      "1. shell for Ann, in this thread · given 1970-01-01 00:00 UTC · does not expire",
      "2. http_fetch for Bob, in this thread · given 1970-01-01 00:00 UTC · does not expire",
      "3. write_file for everyone here, in this conversation · given 1970-01-01 00:00 UTC · does not expire",
      expect.stringMatching(/^4\. list_files for Ann, everywhere on memory · given 1970-01-01 00:00 UTC · expires .+ UTC \(in 3 h\)$/),
      "The person a decision covers, or an approver, may revoke it.",
    ]);
  });

  it("shows at most eight, says how many more and points to the CLI", async () => {
    mb = await startMemoryBot();
    const first = await mb.channel.say("hello");
    await mb.waitFor(first, "answer to");
    for (let i = 1; i <= 11; i++) {
      await mb.tb.bot.store.rememberAlways(`session:memory:${MEMORY_ROOM}:${first.conversation.threadId}`, `tool_${String(i).padStart(2, "0")}`, i);
    }
    await mb.channel.say("/always", { threadId: first.conversation.threadId });
    const list = await mb.waitFor(first, "Remembered");
    const lines = list.text.split("\n");
    expect(lines[0]).toBe('Remembered "Always" decisions here (11):');
    expect(lines.filter((l) => /^\d+\. tool_/.test(l))).toHaveLength(8);
    expect(list.text).toContain("…and 3 more: see them all with `gatehouse approvals always`.");
  });

  it("names each decision's id where buttons cannot be clicked, for the CLI", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: false } } });
    const first = await mb.channel.say("hello");
    await mb.waitFor(first, "answer to");
    await mb.tb.bot.store.rememberAlways(`sender:memory:${MEMORY_USER}`, "shell", 1);
    const [rule] = await mb.tb.bot.store.listAlwaysRules();
    await mb.channel.say("/always", { threadId: first.conversation.threadId });
    const list = await mb.waitFor(first, "Remembered");
    expect(list.text).toContain(`· id ${rule!.id}`);
    expect(list.text).toContain("Revoke one with `gatehouse approvals always --revoke <id>`.");
  });
});
