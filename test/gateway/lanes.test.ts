import { afterEach, describe, expect, it } from "vitest";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import { eventually } from "../support/bot.ts";
import { MEMORY_USER } from "../support/memory-channel.ts";
import { callTools, heldTool, lastUserText, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

describe("gateway lanes", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("handles two messages in one thread in order, telling the second it is queued, while another thread runs at once", async () => {
    const hold = heldTool("hold");
    mb = await startMemoryBot({ tools: [hold.tool] });
    routeModel(mb.tb.model, [{ when: "first job", first: callTools({ name: "hold" }), then: { text: "First job done." } }]);
    const first = await mb.channel.say("do the first job");
    await hold.started();
    const second = await mb.channel.say("then the second job", { threadId: first.conversation.threadId });
    await mb.waitFor(first, "Queued");

    const other = await mb.channel.say("a quick question elsewhere");
    await mb.waitFor(other, "a quick question elsewhere");
    expect(mb.texts(first).some((t) => t.includes("First job done"))).toBe(false);

    hold.release();
    await mb.waitFor(second, "then the second job");
    const texts = mb.texts(first);
    const at = (words: string) => texts.findIndex((t) => t.includes(words));
    expect(at("Queued")).toBeLessThan(at("First job done"));
    expect(at("First job done")).toBeLessThan(at("then the second job"));
    const order = mb.tb.model.requests.map((r) => lastUserText(r));
    expect(order.findLastIndex((t) => t.includes("first job"))).toBeLessThan(order.findIndex((t) => t.includes("second job")));
  });

  it("handles an approval click at once while its turn waits and another message queues behind it", async () => {
    mb = await startMemoryBot();
    routeModel(mb.tb.model, [
      { when: "save a note", first: callTools({ name: "write_file", args: { path: "n.txt", content: "x" } }), then: { text: "Saved the note." } },
    ]);
    const first = await mb.channel.say("please save a note");
    const card = await eventually(() => mb!.channel.openCards()[0], "an approval card");
    const queued = await mb.channel.say("and one more thing", { threadId: first.conversation.threadId });
    await mb.waitFor(first, "Queued");

    const started = Date.now();
    const outcome = await mb.channel.click(decodeApprovalPayload(card.card!.buttons.approve)!.approvalId, "approve", MEMORY_USER);
    expect(outcome.status).toBe("accepted");
    expect(Date.now() - started).toBeLessThan(1000);
    await mb.waitFor(first, "Saved the note.");
    await mb.waitFor(queued, "and one more thing");
  });
});
