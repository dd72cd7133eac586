/**
 * The bot fixture: the real bot (`startBot`) with the given adapters, talking to the local
 * OpenAI-compatible emulator, with a temporary data folder and its log lines kept in memory.
 * `restart()` stops the bot and starts a new one on the same data folder, as a deploy would.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/schema.ts";
import { startBot, type Bot } from "../../src/main.ts";
import { createLogger } from "../../src/observe/logger.ts";
import type { ChannelAdapter } from "../../src/ports.ts";
import type { AnyTool } from "../../src/tools/tool.ts";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";

/** What a test bot runs with. */
export interface TestBotOptions {
  adapters: ChannelAdapter[];
  /** Changes to the loaded config (approval timeout, access lists, …) before the bot starts. */
  configure?: (config: Config) => void;
  extraTools?: AnyTool[];
  /** An emulator to use; by default the fixture starts (and later closes) its own. */
  model?: OpenAIEmulator;
}

/** A running test bot and what a test inspects of it. */
export interface TestBot {
  bot: Bot;
  model: OpenAIEmulator;
  dataDir: string;
  /** Every log line the bot wrote, as JSON text, across restarts. */
  logLines: string[];
  /** Stops the bot and starts a new one on the same data folder and adapters. */
  restart(): Promise<Bot>;
  /** Stops the bot, the emulator it started and removes the data folder. */
  close(): Promise<void>;
}

/** The config a test bot starts from: the emulator as the endpoint, a temporary data folder, quiet retries. */
export function testConfig(baseURL: string, dataDir: string): Config {
  const config = loadConfig({
    env: { OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: "sk-test-fixture", GATEHOUSE_DATA_DIR: dataDir, LOG_LEVEL: "debug" },
    cwd: dataDir,
  });
  config.model.maxRetries = 0;
  config.model.timeoutMs = 10_000;
  return config;
}

/** Starts the real bot for a test. Call `close()` in afterEach. */
export async function startTestBot(options: TestBotOptions): Promise<TestBot> {
  const model = options.model ?? (await startOpenAIEmulator());
  const dataDir = await mkdtemp(path.join(tmpdir(), "gatehouse-bot-"));
  const logLines: string[] = [];
  const launch = () => {
    const config = testConfig(model.baseURL, dataDir);
    options.configure?.(config);
    const log = createLogger({ level: "debug", destinations: [{ write: (line: string) => void logLines.push(line) }] });
    return startBot(config, { adapters: options.adapters, log, extraTools: options.extraTools });
  };
  let bot = await launch();
  const fixture: TestBot = {
    get bot() {
      return bot;
    },
    model,
    dataDir,
    logLines,
    async restart() {
      await bot.stop();
      bot = await launch();
      return bot;
    },
    async close() {
      try {
        await bot.stop();
      } finally {
        if (!options.model) await model.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
  return fixture;
}

/** Polls `check` until it returns a truthy value; throws with `what` after `timeoutMs`. */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 25_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

/** Gives events that must NOT happen a short chance to happen. */
export const quietFor = (ms = 200) => new Promise((r) => setTimeout(r, ms));
