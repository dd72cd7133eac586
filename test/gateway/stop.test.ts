import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../support/bot.ts";
import { callTools, countingTool, heldTool, lastUserText, messagesOf, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

describe("/stop", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("stops mid-batch: finished calls keep their results, the running one ends its own way, the rest are interrupted", async () => {
    const first = countingTool("fetchfirst");
    const middle = heldTool("crunch");
    const last = countingTool("publish");
    mb = await startMemoryBot({ tools: [first.tool, middle.tool, last.tool] });
    routeModel(mb.tb.model, [
      {
        when: "run the batch",
        first: callTools({ name: "fetchfirst", id: "call_a" }, { name: "crunch", id: "call_b" }, { name: "publish", id: "call_c" }),
        then: { text: "Batch complete." },
      },
    ]);
    const env = await mb.channel.say("run the batch");
    await middle.started();
    await mb.channel.say("/stop", { threadId: env.conversation.threadId });
    await mb.waitFor(env, "Stopped.");
    expect(mb.texts(env).some((t) => t.includes("🛑 Stopping"))).toBe(true);
    expect(mb.texts(env).some((t) => t.includes("Batch complete."))).toBe(false);
    expect(first.runs).toBe(1);
    expect(last.runs).toBe(0);

    const next = await mb.channel.say("what happened to the batch?", { threadId: env.conversation.threadId });
    await mb.waitFor(next, "what happened to the batch?");
    const request = mb.tb.model.requests.find((r) => lastUserText(r).includes("what happened to the batch?"))!;
    const results = new Map(messagesOf(request).filter((m) => m.role === "tool").map((m) => [m.tool_call_id, String(m.content)]));
    expect(results.get("call_a")).toContain("fetchfirst ran");
    expect(results.get("call_b")).toContain("crunch saw the stop and wrapped up");
    expect(results.get("call_c")).toMatch(/publish was not run: interrupted/);
  });

  it("says so when nothing is running", async () => {
    mb = await startMemoryBot();
    const env = await mb.channel.say("/stop");
    await mb.waitFor(env, "Nothing is running here.");
    expect(mb.tb.model.requests).toHaveLength(0);
  });

  it("stops a turn that waits for approval, and the card says it was cancelled", async () => {
    mb = await startMemoryBot();
    routeModel(mb.tb.model, [{ when: "save a note", first: callTools({ name: "write_file", args: { path: "a.txt", content: "x" } }) }]);
    const env = await mb.channel.say("please save a note");
    const card = await eventually(() => mb!.channel.openCards()[0], "an approval card");
    await mb.channel.say("/stop", { threadId: env.conversation.threadId });
    await mb.waitFor(env, "Stopped.");
    await eventually(() => mb!.channel.resolutions.find((r) => r.messageId === card.id && r.resolution.outcome === "cancelled"), "the card marked cancelled");
  });
});
