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
    // Message ids start afresh in the supergroup: the answer replies to nothing there rather than to a stranger's message.
    expect(emulator.botMessages(supergroup.id).filter((m) => m.reply_to_message)).toEqual([]);
    // Telegram refused the old id once; every later call went straight to the supergroup.
    const refused = emulator.calls.filter((c) => c.status === 400 && Number(c.params.chat_id) === GROUP.id);
    expect(refused.map((c) => c.method)).toHaveLength(1);
  });

  it("edits a message only in the chat it was posted in: never a message of the supergroup that has the same id", async () => {
    harness = await createTelegramHarness();
    const port = harness.adapter.port;
    const emulator = harness.emulator;
    emulator.userMessage({ text: "hi", chat: GROUP, mentionBot: true });
    const target = { channel: "telegram", conversationId: String(GROUP.id) };
    const before = await port.send(target, { text: "status: working" });

    const supergroup = emulator.upgradeToSupergroup(GROUP);
    const after = await port.send(target, { text: "answer in the supergroup" });
    expect(after.id).toBe(`${supergroup.id}:${after.id.split(":")[1]}`);
    // The bot's first message in the supergroup has the id its status message had in the group.
    const stranger = emulator.botMessages(supergroup.id).find((m) => Number(before.id) === m.message_id);
    expect(stranger?.text).toBe("answer in the supergroup");

    await expect(port.edit!(target, before.id, { text: "status: done" })).rejects.toThrow(/upgraded to a supergroup/);
    expect(stranger!.text).toBe("answer in the supergroup");
    await port.edit!(target, after.id, { text: "answer, edited" });
    expect(emulator.botMessages(supergroup.id).map((m) => m.text)).toContain("answer, edited");
    expect(await port.permalink!(target, after.id)).toBe(`https://t.me/c/${String(supergroup.id).slice(4)}/${after.id.split(":")[1]}`);
  });
});
