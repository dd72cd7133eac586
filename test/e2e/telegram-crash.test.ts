import { afterEach, describe, expect, it } from "vitest";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";
import { startBotProcess, type BotProcess } from "./process.ts";
import { waitUntil } from "../support/wait.ts";

let model: OpenAIEmulator;
let telegram: TelegramEmulator;
const bots: BotProcess[] = [];

afterEach(async () => {
  for (const b of bots.splice(0)) await b.stop();
  await telegram?.close();
  await model?.close();
});

describe("a crash while an approval waits", () => {
  it("after the restart the old card shows it expired, and a click on it is told so and runs nothing", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script({ toolCalls: [{ name: "write_file", arguments: '{"path":"crash.txt","content":"x"}' }] });
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    bots.push(first);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    await telegram.userMessage({ text: "write crash.txt", from: { id: 5151 } }).delivered;
    await waitUntil(() => expect(telegram.botMessages(5151).some((m) => m.reply_markup?.inline_keyboard?.length)).toBe(true), { timeout: 10_000 });
    const card = telegram.botMessages(5151).find((m) => m.reply_markup?.inline_keyboard?.length)!;
    const approve = card.reply_markup!.inline_keyboard.flat()[0]!.callback_data!;

    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    const second = startBotProcess(env, { dataDir: first.dataDir });
    bots.push(second);
    await waitUntil(() => expect(telegram.botMessages(5151).find((m) => m.message_id === card.message_id)!.text).toMatch(/Expired: the bot restarted/), {
      timeout: 15_000,
    });
    const click = telegram.clickButton({ chatId: 5151, messageId: card.message_id, data: approve, from: { id: 5151 } });
    const answer = await click.answered;
    expect(JSON.stringify(answer)).toMatch(/expired/);
    expect(existsSync(path.join(first.dataDir, "data", "workspace", "crash.txt"))).toBe(false);
    rmSync(first.dataDir, { recursive: true, force: true });
  });

  it("after a crash mid-turn the restarted bot tells the sender the message was not finished", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script({ hang: true });
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    bots.push(first);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    await telegram.userMessage({ text: "summarize the incident", from: { id: 6262 } }).delivered;
    await waitUntil(() => expect(model.requests.length).toBe(1), { timeout: 10_000 });
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));

    const second = startBotProcess(env, { dataDir: first.dataDir });
    bots.push(second);
    await waitUntil(
      () => expect(telegram.botMessages(6262).map((m) => m.text).join("\n")).toMatch(/restarted while working on your message \("summarize the incident"\)/),
      { timeout: 15_000 },
    );
    rmSync(first.dataDir, { recursive: true, force: true });
  });

  it("SIGTERM ends the bot within seconds even while the platform asks for an hour's wait", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script({ text: "an answer that cannot be sent" });
    const bot = startBotProcess({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL });
    bots.push(bot);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    telegram.failNext("sendMessage", { status: 429, retryAfter: 3600 }, 5);
    await telegram.userMessage({ text: "hello", from: { id: 7373 } }).delivered;
    await waitUntil(() => expect(telegram.callsOf("sendMessage").length).toBeGreaterThan(0), { timeout: 10_000 });
    const started = Date.now();
    const code = await bot.stop();
    expect(Date.now() - started).toBeLessThan(9500);
    expect(code).toBe(0);
  });

  it("stops with exit code 1 and says why when another process keeps polling the same bot", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    const bot = startBotProcess({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL });
    bots.push(bot);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    const exited = new Promise<number | null>((resolve) => bot.child.once("exit", (code) => resolve(code)));
    // A second poller: each of its polls ends the bot's running poll with 409, as Telegram does.
    for (let i = 0; i < 8 && bot.child.exitCode === null; i++) {
      await fetch(`${telegram.apiRoot}/bot${telegram.token}/getUpdates?timeout=1`).then((r) => r.text()).catch(() => "");
    }
    expect(await exited).toBe(1);
    expect(bot.output()).toMatch(/the telegram channel stopped: .*(409|another|poll)/i);
    expect(bot.output()).not.toContain(telegram.token);
  });
});
