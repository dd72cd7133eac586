import { afterEach, describe, expect, it } from "vitest";
import { createTelegramHarness, type TelegramHarness } from "./harness.ts";
import { startTestBot, type TestBot } from "../support/bot.ts";
import { routeModel } from "../support/scenario.ts";
import { waitUntil } from "../support/wait.ts";

let harness: TelegramHarness | undefined;
let fixture: TestBot | undefined;
afterEach(async () => {
  await fixture?.close();
  await harness?.close();
  fixture = undefined;
  harness = undefined;
});

describe("answers in one Telegram chat", () => {
  it("each reply to the message they answer, not to the chat's first message", async () => {
    harness = await createTelegramHarness();
    fixture = await startTestBot({ adapters: [harness.adapter] });
    routeModel(fixture.model, []);
    const emu = harness.emulator;
    const first = emu.userMessage({ text: "first question", from: { id: 3131 } });
    await first.delivered;
    await waitUntil(() => expect(emu.botMessages(3131).map((m) => m.text)).toContain("answer to: first question"));
    const second = emu.userMessage({ text: "second question", from: { id: 3131 } });
    await second.delivered;
    await waitUntil(() => expect(emu.botMessages(3131).map((m) => m.text)).toContain("answer to: second question"));
    const answers = emu.botMessages(3131);
    const replyOf = (text: string) => answers.find((m) => m.text === text)!.reply_to_message?.message_id;
    expect(replyOf("answer to: first question")).toBe(first.message.message_id);
    expect(replyOf("answer to: second question")).toBe(second.message.message_id);
  });
});
