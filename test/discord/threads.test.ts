import { describe, expect, it } from "vitest";
import { ThreadTracker } from "../../adapters/discord/threads.ts";

describe("Discord thread bookkeeping", () => {
  it("stays bounded after 20,000 distinct threads", () => {
    const threads = new ThreadTracker();
    for (let i = 0; i < 10_000; i++) threads.expect(`m${i}`, "parent", "question");
    for (let i = 0; i < 10_000; i++) threads.markJoined(`t${i}`);
    expect(threads.size).toBeLessThanOrEqual(10_000);
    expect(threads.isBotThread("t9999")).toBe(true);
    expect(threads.isBotThread("m9999")).toBe(true);
  });

  it("keeps a thread the bot is busy in while newer ones come and go", () => {
    const threads = new ThreadTracker();
    threads.markJoined("busy");
    for (let i = 0; i < 12_000; i++) {
      threads.markJoined(`t${i}`);
      if (i % 1000 === 0) expect(threads.isBotThread("busy")).toBe(true);
    }
    expect(threads.isBotThread("busy")).toBe(true);
    expect(threads.isBotThread("t0")).toBe(false);
  });
});
