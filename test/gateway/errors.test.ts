import { afterEach, describe, expect, it } from "vitest";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

const REF = /\(ref ([0-9a-f]{10})\)/;

describe("errors shown to the person", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("answers with a reference id that the log lines carry when the model endpoint keeps failing", async () => {
    mb = await startMemoryBot({ configure: (config) => void (config.model.maxRetries = 1) });
    mb.tb.model.setFallback(() => ({ status: 500 }));
    const env = await mb.channel.say("summarize the week");
    const reply = await mb.waitFor(env, "(ref ", 8000);
    expect(mb.tb.model.requests.length).toBeGreaterThanOrEqual(2);
    const traceId = REF.exec(reply.text)![1]!;
    expect(reply.text).toMatch(/^⚠️ Sorry, I couldn't finish this/);
    expect(reply.text).not.toMatch(/\n\s+at /);
    const errorLines = mb.tb.logLines.filter((l) => l.includes(traceId) && JSON.parse(l).level >= 50);
    expect(errorLines.length).toBeGreaterThan(0);
  });

  it("answers with a reference id when the store fails after the turn, and logs the crash under it", async () => {
    mb = await startMemoryBot();
    const store = mb.tb.bot.store;
    // The store is the project's own interface; a failing write stands in for a full disk.
    store.finishTurn = async () => {
      throw new Error("disk I/O error");
    };
    const env = await mb.channel.say("hello");
    const reply = await mb.waitFor(env, "(ref ");
    const traceId = REF.exec(reply.text)![1]!;
    expect(reply.text).toContain("Something went wrong on my side");
    expect(reply.text).not.toContain("disk I/O error");
    expect(mb.tb.logLines.some((l) => l.includes(traceId) && l.includes("disk I/O error"))).toBe(true);
  });
});
