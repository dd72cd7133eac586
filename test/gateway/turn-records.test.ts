/**
 * A turn's record in the store (its checkpoints) lasts while the turn runs: once it answered,
 * nothing of it is left, whether it saved checkpoints (a call that may not run twice) or none (reads
 * of local state only).
 */
import { afterEach, describe, expect, it } from "vitest";
import { heldTool, callTools, routeModel } from "../support/scenario.ts";
import { eventually } from "../support/bot.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";
import { sessionKeyOf } from "../../src/envelope.ts";

let mb: MemoryBot | undefined;
afterEach(async () => {
  await mb?.close();
  mb = undefined;
});

describe("a turn's record in the store", () => {
  it("is saved while a call that may not run twice runs, and gone once the turn answered", async () => {
    const hold = heldTool("deploy_step");
    mb = await startMemoryBot({ tools: [hold.tool] });
    routeModel(mb.tb.model, [{ when: "deploy it", first: callTools({ name: "deploy_step" }), then: { text: "deployed" } }]);
    const env = await mb.channel.say("deploy it");
    await hold.started();
    const store = mb.tb.bot.store;
    await eventually(async () => ((await store.listTurns()).length === 1 ? true : undefined), "the turn's checkpoint");
    hold.release();
    await mb.waitFor(env, "deployed");
    expect(await store.listTurns()).toEqual([]);
    expect((await store.loadHistory(sessionKeyOf(env), 10)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("is never saved for a turn of reads of local state only, and none is left after it", async () => {
    mb = await startMemoryBot();
    routeModel(mb.tb.model, [{ when: "what time is it", first: callTools({ name: "current_time" }), then: { text: "it is noon" } }]);
    const env = await mb.channel.say("what time is it");
    await mb.waitFor(env, "it is noon");
    expect(await mb.tb.bot.store.listTurns()).toEqual([]);
  });
});
