/**
 * `gatehouse start` (what `npm start` runs): loads the config, starts the bot in the
 * foreground, and shuts down cleanly on SIGINT/SIGTERM or when the console's input ends.
 */
import { loadConfig } from "../config/load.ts";
import { startBot, type Bot } from "../main.ts";

export async function runStart(): Promise<number> {
  const config = loadConfig();
  let bot: Bot | undefined;
  let exiting = false;
  const shutdown = async (code: number) => {
    if (exiting) return;
    exiting = true;
    await bot?.stop();
    process.exit(code);
  };
  process.once("SIGINT", () => void shutdown(0));
  process.once("SIGTERM", () => void shutdown(0));
  bot = await startBot(config, {
    // The console's input ended (Ctrl-D, or the end of a piped file): finish what was asked, then stop.
    onShutdownRequest: () => {
      void (async () => {
        await bot?.gateway.lanes.idle();
        await shutdown(0);
      })();
    },
  });
  return new Promise<number>(() => {
    // Runs until a signal or the end of console input.
  });
}
