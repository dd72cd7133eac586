/**
 * `gatehouse start` (what `npm start` runs): loads the config, starts the bot in the
 * foreground, and shuts down cleanly on SIGINT/SIGTERM or when the console's input ends.
 * A shutdown that takes longer than SHUTDOWN_LIMIT_MS (a platform asking for a very long wait)
 * is cut short. An error that escapes an SDK's event handling is logged and the bot keeps running.
 */
import { loadConfig } from "../config/load.ts";
import { startBot, type Bot } from "../main.ts";
import { scrubSecrets } from "../observe/scrub.ts";

const SHUTDOWN_LIMIT_MS = 8000;

export async function runStart(): Promise<number> {
  const config = loadConfig();
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
  process.once("SIGTERM", () => void shutdown(0));
  const contain = (kind: string) => (err: unknown) => {
    const message = scrubSecrets(err instanceof Error ? err.message : String(err));
    if (bot) bot.log.error({ err: { message, stack: err instanceof Error ? scrubSecrets(err.stack ?? "") : undefined } }, `${kind}; the bot keeps running`);
    else process.stderr.write(`gatehouse: ${kind}: ${message}\n`);
  };
  process.on("uncaughtException", contain("uncaught error"));
  process.on("unhandledRejection", contain("unhandled rejection"));

  bot = await startBot(config, {
    // The console's input ended (Ctrl-D, or the end of a piped file): finish what was asked, then stop.
    onShutdownRequest: () => {
      void (async () => {
        await bot?.gateway.lanes.idle();
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
  // Stays up until a signal, the end of console input, or a failed channel.
  const keepAlive = setInterval(() => {}, 60_000);
  return new Promise<number>(() => void keepAlive);
}
