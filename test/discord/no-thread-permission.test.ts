import { afterEach, describe, expect, it } from "vitest";
import { createDiscordHarness, type DiscordHarness } from "./harness.ts";
import { startTestBot, type TestBot } from "../support/bot.ts";
import { callTools, routeModel } from "../support/scenario.ts";
import { waitUntil } from "../support/wait.ts";

let harness: DiscordHarness | undefined;
let fixture: TestBot | undefined;
afterEach(async () => {
  await fixture?.close();
  await harness?.close();
  fixture = undefined;
  harness = undefined;
});

describe("Discord: a channel where the bot may post but not start threads", () => {
  it("answers in the channel as replies to the message, progress line included, instead of staying silent", async () => {
    harness = await createDiscordHarness();
    fixture = await startTestBot({ adapters: [harness.adapter] });
    routeModel(fixture.model, [
      { when: "what time is it", first: callTools({ name: "current_time" }), then: { text: "It is noon." } },
      { when: "and tomorrow", first: { text: "Tomorrow comes after today." } },
    ]);
    const emulator = harness.emulator;
    emulator.failNext("startThread", { status: 403, code: 50013, message: "Missing Permissions" }, 10);
    const bot = () => emulator.messages(emulator.textChannelId).filter((m) => m.author.id === emulator.bot.id);

    const first = await harness.userSays("what time is it");
    await waitUntil(() => expect(bot().map((m) => m.content)).toContain("It is noon."), { timeout: 10_000 });
    expect(bot().every((m) => m.message_reference?.message_id === first.messageId)).toBe(true);
    await waitUntil(() => expect(bot().map((m) => m.content).join("\n")).toMatch(/✅ current_time/), { timeout: 10_000 });

    const second = await harness.userSays("and tomorrow");
    await waitUntil(() => expect(bot().map((m) => m.content)).toContain("Tomorrow comes after today."), { timeout: 10_000 });
    expect(bot().find((m) => m.content === "Tomorrow comes after today.")?.message_reference?.message_id).toBe(second.messageId);
    expect([...emulator.state.channels.values()].filter((c) => c.parent_id)).toEqual([]);
  });
});
