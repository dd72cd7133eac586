/**
 * Slack's native status while a task works in an assistant thread: the thread status names the
 * running tool ("is running slowstep…") and is cleared with the answer. And the pacing the adapter
 * declares: chat.update budgeted per workspace, for the live status messages.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSlackAdapter } from "../../adapters/slack/adapter.ts";
import { SLACK_PACING } from "../../adapters/slack/outbound.ts";
import { eventually, quietFor, startTestBot, type TestBot } from "../support/bot.ts";
import { callTools, heldTool, routeModel, type HeldTool } from "../support/scenario.ts";
import { GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";

describe("the assistant thread status", () => {
  let h: SlackHarness | undefined;
  let tb: TestBot | undefined;
  let slow: HeldTool;

  afterEach(async () => {
    slow?.release();
    await tb?.close();
    await h?.close();
    tb = undefined;
    h = undefined;
  });

  it("names the running tool while the task works, and is cleared with the answer", async () => {
    h = await createSlackHarness();
    slow = heldTool("slowstep");
    tb = await startTestBot({ adapters: [h.adapter], extraTools: [slow.tool], configure: (c) => void (c.tools.profile = "full") });
    routeModel(tb.model, [{ when: "long job", first: callTools({ name: "slowstep" }), then: { text: "The long job is complete." } }]);
    const posted = await h.userSays("start the long job");
    const { world } = h.emulator;
    const status = () => world.threadStatus(GENERAL, posted.threadId!);
    await slow.started();
    await eventually(() => status() === "is running slowstep…", "the status naming the tool", 8000);
    slow.release();
    await eventually(() => world.messages.some((m) => m.text.includes("The long job is complete")), "the answer");
    await eventually(() => status() === "", "the status cleared");
    await quietFor(1500);
    expect(status()).toBe("");
    const statuses = world.calls.filter((c) => c.method === "assistant.threads.setStatus").map((c) => c.args.status);
    expect(statuses).toContain("is working…");
    expect(statuses.at(-1)).toBe("");
  });
});

describe("Slack's pacing", () => {
  it("is what the adapter declares, with chat.update (about 50 a minute) budgeted per workspace", () => {
    const adapter = createSlackAdapter({ botToken: "xoxb-test", appToken: "xapp-test", apiUrl: "http://127.0.0.1:9/api/" });
    expect(adapter.pacing).toBe(SLACK_PACING);
    const [here] = SLACK_PACING.editLimits!({ channel: "slack", conversationId: GENERAL, threadId: "1.2" });
    const [there] = SLACK_PACING.editLimits!({ channel: "slack", conversationId: "C0OTHER", threadId: "3.4" });
    expect(here!.key).toBe(there!.key);
    expect(60_000 / here!.intervalMs).toBeLessThanOrEqual(50);
  });
});
