import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startPostgres, type PostgresServer } from "../support/postgres.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => server?.stop());

describe("a replica's room for new threads", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("is not taken by threads whose answers the platform holds back: a new thread is answered meanwhile", async () => {
    const url = await server.createDatabase();
    mb = await startMemoryBot({
      configure: (c) => {
        c.databaseUrl = url;
        // One turn slot: room for two threads at a time.
        c.gateway.maxConcurrentTurns = 1;
      },
    });
    // The platform refuses the next two posts for a minute: the answers in the first two channels wait.
    mb.channel.failWithRateLimit(2, 60_000);
    const first = await mb.channel.say("first question", { conversationId: "C1" });
    const second = await mb.channel.say("second question", { conversationId: "C2" });
    await new Promise((r) => setTimeout(r, 1000));
    expect(mb.channel.rateLimited).toHaveLength(2);
    expect(mb.texts(first).join("\n") + mb.texts(second).join("\n")).not.toMatch(/answer to/);

    const third = await mb.channel.say("third question", { conversationId: "C3" });
    await mb.waitFor(third, "third question", 5000);
  });
});
