import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.ts";
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

describe("npm start with TELEGRAM_WEBHOOK_URL", () => {
  it("listens where the webhook URL points, registers it with the secret, and answers pushed updates", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script({ text: "Hello over the webhook." });
    const port = await freePort();
    bot = startBotProcess({
      TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL,
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/telegram/hook`, TELEGRAM_WEBHOOK_SECRET: "s3cret-hook_value",
    });
    await waitUntil(() => expect(telegram.callsOf("setWebhook").length).toBe(1), { timeout: 15_000 });
    const sent = telegram.userMessage({ text: "hi there", from: { id: 777, first_name: "Wes" } });
    await sent.delivered;
    await waitUntil(() => expect(telegram.botMessages(777).map((m) => m.text)).toContain("Hello over the webhook."), { timeout: 10_000 });
    expect(telegram.callsOf("getUpdates")).toHaveLength(0);
    expect(bot.output()).not.toContain("s3cret-hook_value");
  });
});
