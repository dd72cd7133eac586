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
 * With BARE_MODEL_REQUESTS the bot asks the model what Gatehouse asks it instead of its own short
 * request: the given system prompt and tool specs, the reply streamed when `stream` is true, and the
 * chat's earlier messages (kept in memory) when `history` is true. The bench reads these off
 * Gatehouse's own first request, so that both bots give the model server the same work.
 *
 * Environment: TELEGRAM_BOT_TOKEN, TELEGRAM_API_ROOT, OPENAI_BASE_URL, OPENAI_API_KEY,
 * GATEHOUSE_MODEL (default gpt-4o-mini), BARE_TYPING (1/0), BARE_PROGRESS (lines|once|edit|off),
 * BARE_MODEL_REQUESTS (JSON: { system, tools, stream, history }).
 */
import { Bot, GrammyError } from "grammy";
import OpenAI from "openai";
import type { ChatCompletionMessage, ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";

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

/** What the model is asked, when not the bot's own short request (see BARE_MODEL_REQUESTS above). */
interface ModelRequests {
  system: string;
  tools: ChatCompletionTool[];
  stream: boolean;
  history: boolean;
}
const asked: ModelRequests = process.env.BARE_MODEL_REQUESTS
  ? (JSON.parse(process.env.BARE_MODEL_REQUESTS) as ModelRequests)
  : { system: "You are a helpful assistant. Answer briefly.", tools, stream: false, history: false };
/** Each chat's earlier messages, when the model is sent them. */
const histories = new Map<number, ChatCompletionMessageParam[]>();

/** One model reply: the SDK's completion, or its stream put together (text and tool calls). */
async function complete(messages: ChatCompletionMessageParam[]): Promise<ChatCompletionMessage | undefined> {
  const request = { model: modelName, messages, tools: asked.tools };
  if (!asked.stream) return (await openai.chat.completions.create(request)).choices[0]?.message;
  let content = "";
  const calls: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }> = [];
  for await (const chunk of await openai.chat.completions.create({ ...request, stream: true })) {
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) content += delta.content;
    for (const call of delta?.tool_calls ?? []) {
      const slot = (calls[call.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.function.name += call.function.name;
      if (call.function?.arguments) slot.function.arguments += call.function.arguments;
    }
  }
  return { role: "assistant", content: content || null, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) };
}

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
  const earlier = asked.history ? (histories.get(chatId) ?? []) : [];
  const messages: ChatCompletionMessageParam[] = [{ role: "system", content: asked.system }, ...earlier, { role: "user", content: text }];
  for (let round = 0; round < 5; round++) {
    const message = await complete(messages);
    const calls = message?.tool_calls ?? [];
    if (calls.length === 0) {
      if (asked.history) histories.set(chatId, [...messages.slice(1), { role: "assistant", content: message?.content ?? "" }]);
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
