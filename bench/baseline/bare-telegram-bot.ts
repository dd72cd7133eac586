/**
 * The baseline of bench/telegram-throughput.bench.ts: the simplest honest Telegram bot a
 * developer would write straight on grammY and the openai package. For each private-chat text
 * message it shows "typing", asks the model (with one tool, current_time), runs the tool, posts
 * progress ("⏳ current_time: UTC", "✅ current_time (0.0s)"), asks the model again and replies
 * with the answer — the same Bot API calls Gatehouse makes for "what time is it" (the bench
 * tells it which through BARE_TYPING and BARE_PROGRESS). Messages of one chat are answered in
 * order (a promise chain per chat); chats run concurrently. A 429 is waited out for the
 * retry_after Telegram gives. No history, no store, no policy: that is the point of a baseline.
 *
 * Environment: TELEGRAM_BOT_TOKEN, TELEGRAM_API_ROOT, OPENAI_BASE_URL, OPENAI_API_KEY,
 * GATEHOUSE_MODEL (default gpt-4o-mini), BARE_TYPING (1/0), BARE_PROGRESS (lines|once|edit|off).
 */
import { Bot, GrammyError } from "grammy";
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";

const token = process.env.TELEGRAM_BOT_TOKEN ?? "";
const apiRoot = process.env.TELEGRAM_API_ROOT ?? "https://api.telegram.org";
const modelName = process.env.GATEHOUSE_MODEL ?? "gpt-4o-mini";
const typing = process.env.BARE_TYPING !== "0";
const progress = (process.env.BARE_PROGRESS ?? "lines") as "lines" | "once" | "edit" | "off";

const bot = new Bot(token, { client: { apiRoot } });
const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY ?? "none" });

const tools: ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "current_time",
      description: "Returns the current date and time as ISO 8601 (UTC).",
      parameters: { type: "object", properties: { timezone: { type: "string", description: "IANA time zone; UTC when omitted" } } },
    },
  },
];

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs a Bot API call, waiting out 429s for as long as Telegram says (at most 30 times). */
async function retry429<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 429 && attempt < 30) {
        await sleep((error.parameters.retry_after ?? 1) * 1000);
        continue;
      }
      throw error;
    }
  }
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function runTool(name: string, rawArgs: string): string {
  if (name !== "current_time") return `unknown tool ${name}`;
  let zone = "UTC";
  try {
    zone = (JSON.parse(rawArgs || "{}") as { timezone?: string }).timezone ?? "UTC";
  } catch {
    return "bad arguments";
  }
  return `${new Date().toISOString()} (${zone})`;
}

async function answer(chatId: number, messageId: number, text: string): Promise<void> {
  const reply = {
    parse_mode: "HTML" as const,
    reply_parameters: { message_id: messageId, allow_sending_without_reply: true },
    link_preview_options: { is_disabled: true },
  };
  const send = (t: string) => retry429(() => bot.api.sendMessage(chatId, escapeHtml(t), reply));
  if (typing) await retry429(() => bot.api.sendChatAction(chatId, "typing")).catch(() => {});
  const messages: ChatCompletionMessageParam[] = [
    { role: "system", content: "You are a helpful assistant. Answer briefly." },
    { role: "user", content: text },
  ];
  for (let round = 0; round < 5; round++) {
    const completion = await openai.chat.completions.create({ model: modelName, messages, tools });
    const message = completion.choices[0]?.message;
    const calls = message?.tool_calls ?? [];
    if (calls.length === 0) {
      await send(message?.content || "(no answer)");
      return;
    }
    messages.push(message!);
    for (const call of calls) {
      if (call.type !== "function") continue;
      const start = `⏳ ${call.function.name}: UTC`;
      const started = progress === "lines" || progress === "edit" ? await send(start) : undefined;
      const t0 = performance.now();
      const result = runTool(call.function.name, call.function.arguments);
      const done = `✅ ${call.function.name} (${((performance.now() - t0) / 1000).toFixed(1)}s)`;
      if (progress === "lines") await send(done);
      else if (progress === "once") await send(`${start}\n${done}`);
      else if (progress === "edit" && started) {
        await retry429(() => bot.api.editMessageText(chatId, started.message_id, escapeHtml(`${start}\n${done}`), { parse_mode: "HTML" }));
      }
      messages.push({ role: "tool", tool_call_id: call.id, content: result });
    }
  }
  await send("(gave up after 5 model calls)");
}

/** One promise chain per chat: its messages are answered in order, other chats do not wait. */
const chains = new Map<number, Promise<void>>();

bot.on("message:text", (ctx) => {
  if (ctx.chat.type !== "private") return;
  const chatId = ctx.chat.id;
  const messageId = ctx.msg.message_id;
  const text = ctx.msg.text;
  const next = (chains.get(chatId) ?? Promise.resolve())
    .then(() => answer(chatId, messageId, text))
    .catch((error: unknown) => console.error(`chat ${chatId}: ${(error as Error).message}`));
  chains.set(chatId, next);
  void next.then(() => {
    if (chains.get(chatId) === next) chains.delete(chatId);
  });
  // Not awaited: grammY's polling loop goes on with the next update at once.
});

bot.catch((err) => console.error(`update ${err.ctx.update.update_id}: ${(err.error as Error).message}`));

const stop = () => {
  void bot.stop().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 3000).unref();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);

await bot.start({ onStart: () => console.log("bare bot polling") });
