import { afterEach, describe, expect, it } from "vitest";
import { callTools, heldTool, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

describe("shutdown", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close().catch(() => {});
    mb = undefined;
  });

  it("keeps the running turn for after the restart and answers the queued message instead of starting it", async () => {
    const hold = heldTool("longjob");
    mb = await startMemoryBot({ tools: [hold.tool], configure: (c) => void (c.gateway.shutdownGraceMs = 300) });
    routeModel(mb.tb.model, [{ when: "start the long job", first: callTools({ name: "longjob" }), then: { text: "long job done" } }]);
    const first = await mb.channel.say("start the long job");
    await hold.started();
    const second = await mb.channel.say("and then this", { threadId: first.conversation.threadId });
    await mb.waitFor(second, "Queued");

    const started = Date.now();
    await mb.tb.bot.stop();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(hold.starts).toBe(1);
    expect(mb.texts(first).join("\n")).not.toMatch(/long job done|Stopped|stopped this task/);
    expect(mb.texts(second).join("\n")).toMatch(/restarting and did not get to this message/);
  });
});
