import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../support/bot.ts";
import { callTools, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

describe("approval cards in a slow thread", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("marks a card expired even when the approval ran out before the card was posted", async () => {
    // Delivery paces this target at 400 ms, so the card reaches the thread after the 150 ms approval window.
    mb = await startMemoryBot({ channel: { minIntervalMs: 400 }, configure: (config) => void (config.approval.timeoutMs = 150) });
    routeModel(mb.tb.model, [
      { when: "save a note", first: callTools({ name: "write_file", args: { path: "n.txt", content: "x" } }), then: { text: "Could not save it." } },
    ]);
    const env = await mb.channel.say("please save a note");
    await mb.waitFor(env, "Could not save it.");
    const card = await eventually(() => mb!.channel.messages.find((m) => m.card), "the card");
    await eventually(() => card.resolution, "the card to show it expired", 3000);
    expect(card.resolution!.outcome).toBe("expired");
    expect(mb.channel.openCards()).toEqual([]);
  });
});
