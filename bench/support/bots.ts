/**
 * Starting the bots a benchmark compares, each in its own process against the round's emulators:
 *   - Gatehouse as `npm start` runs it (`node bin/gatehouse.js start`), configured only by environment
 *     variables, in a fresh data folder (as test/e2e/process.ts does);
 *   - the bare grammY + openai baseline (bench/baseline/bare-telegram-bot.ts), with Node's compile
 *     cache on as bin/gatehouse.js turns it on for Gatehouse (after a first start, neither strips
 *     types again nor keeps the TypeScript stripper in memory).
 * Both resolve once the bot is polling, so that the load can be injected.
 */
import { tmpdir } from "node:os";
import path from "node:path";
import type { OpenAIEmulator, TelegramEmulator } from "./emulators.ts";
import { makeTempDir, spawnNode, type ManagedProcess } from "./processes.ts";

export type BotKind = "gatehouse" | "bare";

/** How the bare bot reports progress; the bench sets it to whatever Gatehouse does (see calibrate). */
export interface BareBotPlan {
  typing: boolean;
  /** `lines`: ⏳ and ✅ as two messages; `once`: one message with both; `edit`: ⏳ sent, then edited; `off`: none. */
  progress: "lines" | "once" | "edit" | "off";
  /**
   * What the bare bot asks the model, when not its own short request (one tool, no history, not
   * streamed): Gatehouse's system prompt and tool specs, streamed or not, with the chat's history.
   */
  model?: { system: string; tools: unknown[]; stream: boolean; history: boolean };
}

export interface StartedBot {
  kind: BotKind;
  process: ManagedProcess;
  /** Milliseconds from spawn to polling. */
  startupMs: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until(check: () => boolean, bot: ManagedProcess, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (bot.exited()) throw new Error(`${bot.name} exited before ${what}:\n${bot.output().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`${bot.name}: not ${what} within ${timeoutMs} ms:\n${bot.output().slice(-3000)}`);
    await sleep(20);
  }
}

/** Starts Gatehouse (`node bin/gatehouse.js start`); resolves when its first getUpdates was answered. */
export async function startGatehouse(
  telegram: TelegramEmulator,
  model: OpenAIEmulator,
  options: { extraEnv?: Record<string, string>; logLevel?: string; timeoutMs?: number } = {},
): Promise<StartedBot> {
  const t0 = Date.now();
  const before = telegram.callsOf("getUpdates").length;
  const dir = makeTempDir("gh-bench-gatehouse-");
  const proc = spawnNode({
    name: "gatehouse",
    script: "bin/gatehouse.js",
    args: ["start"],
    dir,
    env: {
      GATEHOUSE_DATA_DIR: path.join(dir, "data"),
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: "bench-key",
      // The default level, as `npm start` runs it.
      LOG_LEVEL: options.logLevel ?? "info",
      ...options.extraEnv,
    },
  });
  try {
    await until(() => telegram.callsOf("getUpdates").length > before, proc, options.timeoutMs ?? 30_000, "polling");
  } catch (error) {
    await proc.stop(2000);
    throw error;
  }
  return { kind: "gatehouse", process: proc, startupMs: Date.now() - t0 };
}

/** Starts the bare grammY + openai bot; resolves when it prints that it is polling. */
export async function startBareBot(
  telegram: TelegramEmulator,
  model: OpenAIEmulator,
  plan: BareBotPlan,
  timeoutMs = 30_000,
  extraEnv: Record<string, string> = {},
): Promise<StartedBot> {
  const t0 = Date.now();
  const proc = spawnNode({
    name: "bare",
    script: path.join("bench", "baseline", "bare-telegram-bot.ts"),
    env: {
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: "bench-key",
      BARE_TYPING: plan.typing ? "1" : "0",
      BARE_PROGRESS: plan.progress,
      ...(plan.model ? { BARE_MODEL_REQUESTS: JSON.stringify(plan.model) } : {}),
      NODE_COMPILE_CACHE: path.join(tmpdir(), "node-compile-cache"),
      ...extraEnv,
    },
  });
  try {
    await proc.waitForOutput(/bare bot polling/, timeoutMs);
  } catch (error) {
    await proc.stop(2000);
    throw new Error(`${(error as Error).message}\n${proc.output().slice(-3000)}`);
  }
  return { kind: "bare", process: proc, startupMs: Date.now() - t0 };
}

/**
 * The bare bot's plan, read off the calls Gatehouse made for one "what time is it" (successful
 * calls to one chat, in order): typing or not, and how progress was posted.
 */
export function planFromCalls(calls: ReadonlyArray<{ method: string; status: number; text?: string }>): BareBotPlan {
  const ok = calls.filter((c) => c.status === 200);
  const typing = ok.some((c) => c.method === "sendChatAction");
  const isProgress = (t: string | undefined) => t !== undefined && /^(⏳|✅|❌)/u.test(t);
  const progressSends = ok.filter((c) => c.method === "sendMessage" && isProgress(c.text)).length;
  const edits = ok.filter((c) => c.method === "editMessageText" && isProgress(c.text)).length;
  const progress = progressSends >= 1 && edits >= 1 ? "edit" : progressSends >= 2 ? "lines" : progressSends === 1 ? "once" : "off";
  return { typing, progress };
}
