/**
 * A bot on the memory channel for gateway tests: the fixture, the channel, and the waits the
 * tests share (a message in a thread, the bot's texts in order).
 */
import type { Config } from "../../src/config/schema.ts";
import type { IngressEnvelope } from "../../src/envelope.ts";
import type { AnyTool } from "../../src/tools/tool.ts";
import { eventually, startTestBot, type TestBot } from "../support/bot.ts";
import { routeModel } from "../support/scenario.ts";
import { MemoryChannel, type MemoryChannelOptions, type MemoryMessage } from "../support/memory-channel.ts";

/** A test bot on one memory channel. */
export interface MemoryBot {
  channel: MemoryChannel;
  tb: TestBot;
  /** The bot's texts in the thread an envelope is answered in, oldest first. */
  texts(env: IngressEnvelope): string[];
  /** Waits for a bot message in that thread containing `text`. */
  waitFor(env: IngressEnvelope, text: string, timeoutMs?: number): Promise<MemoryMessage>;
  close(): Promise<void>;
}

/** Starts the bot with one memory channel; tools beyond the built-ins are offered through the "full" profile. */
export async function startMemoryBot(
  options: { tools?: AnyTool[]; configure?: (config: Config) => void; channel?: MemoryChannelOptions } = {},
): Promise<MemoryBot> {
  const channel = new MemoryChannel(options.channel);
  const tb = await startTestBot({
    adapters: [channel],
    extraTools: options.tools,
    configure: (config) => {
      config.tools.profile = "full";
      config.approval.timeoutMs = 5000;
      options.configure?.(config);
    },
  });
  // Unscripted questions get "answer to: <question>", so a test can see which message was answered.
  routeModel(tb.model, []);
  const inThread = (env: IngressEnvelope) => channel.messagesIn(env.replyTo.conversationId, env.replyTo.threadId);
  return {
    channel,
    tb,
    texts: (env) => inThread(env).map((m) => m.text),
    waitFor: (env, text, timeoutMs) => eventually(() => inThread(env).find((m) => m.text.includes(text)), `"${text}" in the thread`, timeoutMs),
    close: () => tb.close(),
  };
}
