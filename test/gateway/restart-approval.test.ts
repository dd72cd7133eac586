import { afterEach, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import path from "node:path";
import { callTools, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";
import { waitUntil } from "../support/wait.ts";

describe("approval cards across a restart", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("closes the card when a restart stops its turn, and a click on it afterwards says it expired and runs nothing", async () => {
    mb = await startMemoryBot({ channel: { capabilities: { inlineApproval: true } } });
    routeModel(mb.tb.model, [
      { when: "write the report", first: callTools({ name: "write_file", args: { path: "report.txt", content: "q3" } }), then: { text: "written" } },
    ]);
    await mb.channel.say("write the report");
    await waitUntil(() => expect(mb!.channel.openCards()).toHaveLength(1));
    const card = mb.channel.openCards()[0]!.card!;

    await mb.tb.restart();
    await waitUntil(() => expect(mb!.channel.openCards()).toHaveLength(0));
    const closed = mb.channel.messages.find((m) => m.card?.approvalId === card.approvalId)!;
    expect(closed.resolution?.text).toMatch(/Cancelled: the request was stopped; write_file was not run/);

    const outcome = await mb.channel.click(card.approvalId, "approve", "u-alice");
    expect(outcome.status).toBe("expired");
    expect(outcome.message).toMatch(/expired; nothing was run/);
    expect(existsSync(path.join(mb.tb.dataDir, "workspace", "report.txt"))).toBe(false);
  });
});
