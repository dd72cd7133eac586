/**
 * `gatehouse start [--demo]` (what `npm start` runs): loads the config, starts the bot in the
 * foreground, and shuts down cleanly on SIGINT/SIGTERM or when the console's input ends.
 * With no model endpoint configured and only the console to open, or with `--demo` (`npm run demo`),
 * it runs on the built-in demo model, and says so on the terminal; a platform channel with no model
 * endpoint still stops with the error that says how to configure one.
 * A shutdown that takes longer than SHUTDOWN_LIMIT_MS (a platform asking for a very long wait)
 * is cut short. An error that escapes an SDK's event handling is logged and the bot keeps running.
 */
import { flushCompileCache } from "node:module";
import { channelsToStart, loadConfig, modelEndpointProblem } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { startBot, type Bot } from "../main.ts";
import { createDemoModelClient, DEMO_MODEL_HINT, DEMO_MODEL_NOTICE } from "../model/demo-model.ts";
import { scrubSecrets } from "../observe/scrub.ts";
import { readArgs } from "./args.ts";

const SHUTDOWN_LIMIT_MS = 8000;

/** Whether to run on the demo model: asked for, or no endpoint configured and nobody but the terminal to answer. */
export function usesDemoModel(config: Config, asked: boolean): boolean {
  if (asked) return true;
  return modelEndpointProblem(config) !== undefined && channelsToStart(config).every((c) => c === "console");
}

export async function runStart(argv: string[] = []): Promise<number> {
  const { values } = readArgs(argv, { demo: { type: "boolean" } });
  const config = loadConfig();
  const demo = usesDemoModel(config, Boolean(values.demo));
  // The demo is a terminal session: tokens in .env do not turn platforms on, unless GATEHOUSE_CHANNELS names them.
  if (values.demo && !config.channels?.length) config.channels = ["console"];
  if (demo) process.stderr.write(`gatehouse: ${DEMO_MODEL_NOTICE}\n           ${DEMO_MODEL_HINT}\n`);
  let bot: Bot | undefined;
  let exiting = false;
  const shutdown = async (code: number) => {
    if (exiting) return;
    exiting = true;
    setTimeout(() => process.exit(code), SHUTDOWN_LIMIT_MS).unref();
    await bot?.stop().catch(() => {});
    process.exit(code);
  };
  process.once("SIGINT", () => void shutdown(0));
  // `on`, not `once`: a SIGTERM sent to the process group and passed on by bin/gatehouse.js arrives twice.
  process.on("SIGTERM", () => void shutdown(0));
  const contain = (kind: string) => (err: unknown) => {
    const message = scrubSecrets(err instanceof Error ? err.message : String(err));
    if (bot) bot.log.error({ err: { message, stack: err instanceof Error ? scrubSecrets(err.stack ?? "") : undefined } }, `${kind}; the bot keeps running`);
    else process.stderr.write(`gatehouse: ${kind}: ${message}\n`);
  };
  process.on("uncaughtException", contain("uncaught error"));
  process.on("unhandledRejection", contain("unhandled rejection"));

  bot = await startBot(config, {
    ...(demo ? { model: createDemoModelClient(), modelLabel: "the built-in demo model (a short script, not an LLM)" } : {}),
    // The console's input ended (Ctrl-D, or the end of a piped file): finish what was asked, then
    // stop. A turn parked on an approval question left open stays parked, for the next start.
    onShutdownRequest: () => {
      void (async () => {
        await bot?.gateway.lanes.settled();
        await shutdown(0);
      })();
    },
    // A channel lost its connection for good (e.g. another process polls the same Telegram bot):
    // exit non-zero so that a supervisor restarts the bot and the operator sees why.
    onChannelFailed: (channel, detail) => {
      process.stderr.write(`gatehouse: the ${channel} channel stopped: ${detail}\n`);
      void shutdown(1);
    },
  });
  // Every module the bot runs is loaded now: the compile cache (bin/gatehouse.js) is written at
  // once rather than at exit, which a SIGKILL never reaches.
  flushCompileCache?.();
  // Stays up until a signal, the end of console input, or a failed channel.
  const keepAlive = setInterval(() => {}, 60_000);
  return new Promise<number>(() => void keepAlive);
}
