/** Builds the console adapter (the bot in this terminal); it has no settings of its own. */
import type { ChannelAdapter, ChannelSetup } from "../../src/ports.ts";
import { createConsoleAdapter } from "./console-adapter.ts";

/** The console adapter on stdin/stdout; the end of the input asks the bot to shut down. */
export function consoleFromConfig(setup: ChannelSetup<unknown>): ChannelAdapter {
  return createConsoleAdapter({ onInputEnd: setup.onShutdownRequest });
}
