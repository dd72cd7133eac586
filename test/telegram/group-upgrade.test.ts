import { afterEach, describe, expect, it } from "vitest";
import type { TgChat } from "../emulators/telegram/index.ts";
import { createTelegramHarness, type TelegramHarness } from "./harness.ts";
import { startTestBot, type TestBot } from "../support/bot.ts";
import { callTools, heldTool, routeModel } from "../support/scenario.ts";
import { waitUntil } from "../support/wait.ts";

let harness: TelegramHarness | undefined;
let fixture: TestBot | undefined;
afterEach(async () => {
  await fixture?.close();
  await harness?.close();
  fixture = undefined;
  harness = undefined;
});

const GROUP: TgChat = { id: -4001, type: "group", title: "Ops" };

describe("Telegram: a group upgraded to a supergroup while the bot works", () => {
  it("delivers the answer in the supergroup Telegram names, and keeps posting there", async () => {
    const hold = heldTool("longjob");
    harness = await createTelegramHarness();
    fixture = await startTestBot({
      adapters: [harness.adapter],
      extraTools: [hold.tool],
      configure: (config) => {
        config.tools.profile = "full";
        config.telegram.access = { ...config.telegram.access, users: ["*"], conversations: ["*"] };
      },
    });
    routeModel(fixture.model, [
      { when: "run the long job", first: callTools({ name: "longjob" }), then: { text: "The long job is done." } },
    ]);
    const emulator = harness.emulator;
    emulator.userMessage({ text: "run the long job", chat: GROUP, mentionBot: true });
    await hold.started();

    const supergroup = emulator.upgradeToSupergroup(GROUP);
    hold.release();
    await waitUntil(() => expect(emulator.botMessages(supergroup.id).map((m) => m.text)).toContain("The long job is done."), { timeout: 10_000 });
    // Telegram refused the old id once; every later call went straight to the supergroup.
    const refused = emulator.calls.filter((c) => c.status === 400 && Number(c.params.chat_id) === GROUP.id);
    expect(refused.map((c) => c.method)).toHaveLength(1);
  });
});
