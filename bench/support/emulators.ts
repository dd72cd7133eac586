/**
 * The emulators a chat-bot benchmark drives, in the benchmark's own process on 127.0.0.1: the
 * Telegram Bot API emulator (per-chat limits as the test suite has them, or raised out of reach)
 * and the OpenAI-compatible emulator with a model that needs no script:
 *   - the last message is a tool result      → a text answer, "It is <UTC time> right now."
 *   - the user asks to save a note           → a `write_file` call (needs approval when supervised)
 *   - anything else                          → one `current_time` call
 */
import { startOpenAIEmulator, type OpenAIEmulator, type RecordedRequest, type Step } from "../../test/emulators/openai/index.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../../test/emulators/telegram/index.ts";

export type { OpenAIEmulator, TelegramEmulator };

/** `enforced`: the emulator's own limits (a burst of 3 sends per chat per second, 20/min in groups); `unlimited`: out of reach. */
export type LimitMode = "enforced" | "unlimited";

const UNLIMITED = { perChatBurst: 1_000_000_000, groupPerMinute: 1_000_000_000 };

/** The text a user sends to get a `write_file` call (an approval card in the default mode). */
export const CARD_TEXT = "please save a note";
/** The text a user sends to get a `current_time` call and an answer. */
export const TIME_TEXT = "what time is it";

/** True for the final answers the bench model gives (as shown in the chat). */
export const ANSWER_PATTERN = /^It is \S+ right now\.$/;

/**
 * `BENCH_PER_CHAT_BURST` overrides the enforced burst (e.g. 1: strictly one send per chat per second).
 */
export function startTelegram(mode: LimitMode): Promise<TelegramEmulator> {
  if (mode === "unlimited") return startTelegramEmulator({ limits: UNLIMITED });
  const burst = perChatBurstOverride();
  return startTelegramEmulator(burst !== undefined ? { limits: { perChatBurst: burst } } : {});
}

function perChatBurstOverride(): number | undefined {
  const burst = Number(process.env.BENCH_PER_CHAT_BURST);
  return Number.isInteger(burst) && burst > 0 ? burst : undefined;
}

/** Sends per chat per second the enforced mode allows (the emulator's default is 3). */
export function enforcedBurst(): number {
  return perChatBurstOverride() ?? 3;
}

type LooseMessage = { role?: string; content?: unknown };

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "object" && p && "text" in p ? String((p as { text: unknown }).text) : "")).join("");
  return "";
}

/** The bench model: answers every request from the messages it is given. */
export function benchModel(request: RecordedRequest): Step {
  const messages = (request.body.messages ?? []) as LooseMessage[];
  const last = messages[messages.length - 1];
  if (last?.role === "tool") {
    const utc = /\d{4}-\d\d-\d\dT[\d:.]+Z/.exec(textOf(last.content))?.[0] ?? "unknown";
    return { text: `It is ${utc} right now.` };
  }
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  if (lastUser && textOf(lastUser.content).includes(CARD_TEXT)) {
    return { toolCalls: [{ name: "write_file", arguments: JSON.stringify({ path: "note.txt", content: "a note from the bench" }) }] };
  }
  return { toolCalls: [{ name: "current_time", arguments: "{}" }] };
}

export async function startModel(): Promise<OpenAIEmulator> {
  const model = await startOpenAIEmulator();
  model.setFallback(benchModel);
  return model;
}

/** Both emulators for one round; `close` ends both. */
export async function startEmulators(mode: LimitMode): Promise<{ telegram: TelegramEmulator; model: OpenAIEmulator; close(): Promise<void> }> {
  const [telegram, model] = await Promise.all([startTelegram(mode), startModel()]);
  return {
    telegram,
    model,
    async close() {
      await Promise.allSettled([telegram.close(), model.close()]);
    },
  };
}
