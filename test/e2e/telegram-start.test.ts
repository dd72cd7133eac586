import { afterEach, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";
import { startBotProcess, type BotProcess } from "./process.ts";
import { waitUntil } from "../support/wait.ts";

let model: OpenAIEmulator;
let telegram: TelegramEmulator;
let bot: BotProcess;

afterEach(async () => {
  await bot?.stop();
  await telegram?.close();
  await model?.close();
});

describe("npm start with TELEGRAM_BOT_TOKEN", () => {
  it("answers a private chat with progress, asks for approval with buttons, and shuts down cleanly", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script(
      { toolCalls: [{ name: "write_file", arguments: '{"path":"note.txt","content":"from telegram"}' }] },
      { text: "Saved **note.txt** for you & the team <3" },
    );
    bot = startBotProcess({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL });
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });

    const sent = telegram.userMessage({ text: "please save a note", from: { id: 4242, first_name: "Ada" } });
    await sent.delivered;
    await waitUntil(() => expect(telegram.botMessages(4242).some((m) => m.reply_markup)).toBe(true), { timeout: 10_000 });
    const card = telegram.botMessages(4242).find((m) => m.reply_markup)!;
    expect(card.text).toMatch(/write_file/);
    const approve = card.reply_markup!.inline_keyboard.flat().find((b) => /approve/i.test(b.text))!;

    const click = telegram.clickButton({ chatId: 4242, messageId: card.message_id, data: approve.callback_data!, from: { id: 4242 } });
    await click.answered;
    await waitUntil(() => expect(telegram.botMessages(4242).map((m) => m.text).join("\n")).toContain("Saved note.txt for you & the team <3"), { timeout: 10_000 });
    // The status message shows the finished call (and the summary) in its next edit slot.
    await waitUntil(() => expect(telegram.botMessages(4242).map((m) => m.text).join("\n")).toMatch(/✅ write_file[\s\S]*✅ 1 step in/));
    expect(telegram.botMessages(4242).find((m) => m.message_id === card.message_id)!.reply_markup?.inline_keyboard?.length ?? 0).toBe(0);
    expect(readFileSync(path.join(bot.dataDir, "data", "workspace", "note.txt"), "utf8")).toBe("from telegram");

    expect(await bot.stop()).toBe(0);
    expect(existsSync(path.join(bot.dataDir, "data", "gatehouse.pid"))).toBe(false);
    expect(bot.output()).not.toContain(telegram.token);
  });

  it("answers a new user's /start (the Start button) with what it does and its commands, and does not ask the model", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    bot = startBotProcess({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL });
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    const menu = telegram.callsOf("setMyCommands")[0]!.params.commands as Array<{ command: string }>;
    expect(menu.map((c) => c.command)).toContain("help");

    const start = telegram.userMessage({ text: "/start", from: { id: 5151, first_name: "Nia" } });
    await start.delivered;
    await waitUntil(() => expect(telegram.botMessages(5151).map((m) => m.text).join("\n")).toContain("/help — this list"), { timeout: 10_000 });
    const help = telegram.botMessages(5151).at(-1)!;
    for (const command of menu) expect(help.text).toContain(`/${command.command} — `);
    expect(help.text).toContain("I post a card with buttons here");
    expect(model.requests).toHaveLength(0);
    expect(await bot.stop()).toBe(0);
  });
});
