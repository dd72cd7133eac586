import { afterEach, describe, expect, it } from "vitest";
import { createSlackHarness, ALICE, GENERAL, type SlackHarness } from "./harness.ts";
import { startTestBot, type TestBot } from "../support/bot.ts";
import { callTools, heldTool, routeModel } from "../support/scenario.ts";
import { waitUntil } from "../support/wait.ts";

let harness: SlackHarness | undefined;
let fixture: TestBot | undefined;
afterEach(async () => {
  await fixture?.close();
  await harness?.close();
  fixture = undefined;
  harness = undefined;
});

describe("the /gatehouse slash command", () => {
  it("stops the task the person started in a thread of that channel, and reports running tasks", async () => {
    const hold = heldTool("longjob");
    harness = await createSlackHarness();
    fixture = await startTestBot({
      adapters: [harness.adapter],
      extraTools: [hold.tool],
      configure: (config) => {
        config.tools.profile = "full";
      },
    });
    routeModel(fixture.model, [{ when: "run the long job", first: callTools({ name: "longjob" }), then: { text: "long job done" } }]);
    const posted = await harness.userSays("run the long job");
    await hold.started();

    await harness.emulator.slashCommand(GENERAL, ALICE, "/gatehouse", "status");
    await waitUntil(() => expect(harness!.emulator.messagesIn(GENERAL).map((m) => m.text).join("\n")).toMatch(/Working on 1 task here/), { timeout: 5000 });

    await harness.emulator.slashCommand(GENERAL, ALICE, "/gatehouse", "stop");
    await waitUntil(() => expect(harness!.emulator.messagesIn(GENERAL).map((m) => m.text).join("\n")).toMatch(/Stopping 1 task you started here/), { timeout: 5000 });
    await waitUntil(() =>
      expect(harness!.emulator.messagesIn(GENERAL, posted.threadId).map((m) => m.text)).toContain("Stopped."),
      { timeout: 5000 },
    );
  });

  it("answers privately, through the command's response_url, where the bot cannot post: a DM between two people, a channel it has not joined", async () => {
    harness = await createSlackHarness({ emulator: { channelsWithoutBot: ["C0RANDOM"] } });
    fixture = await startTestBot({ adapters: [harness.adapter] });
    const emulator = harness.emulator;

    await emulator.slashCommand("D0ALICEBOB", ALICE, "/gatehouse", "status");
    await waitUntil(() => expect(emulator.world.ephemerals).toEqual([expect.objectContaining({ channel: "D0ALICEBOB", user: ALICE, via: "response_url", text: "Idle: nothing is running here." })]), { timeout: 5000 });

    await emulator.slashCommand("C0RANDOM", ALICE, "/gatehouse", "new");
    await waitUntil(() => expect(emulator.world.ephemerals.map((e) => e.channel)).toEqual(["D0ALICEBOB", "C0RANDOM"]), { timeout: 5000 });
    expect(emulator.world.calls.filter((c) => c.method === "chat.postMessage").map((c) => c.result)).toEqual(["channel_not_found", "not_in_channel"]);
    expect(emulator.messagesIn("C0RANDOM")).toEqual([]);
  });
});
