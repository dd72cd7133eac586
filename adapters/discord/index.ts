/**
 * The Discord channel adapter: a discord.js Client on the gateway (intents Guilds,
 * GuildMessages, MessageContent, DirectMessages) feeding the gateway's sink, and an outbound
 * port over discord.js REST. `createDiscordAdapter` is what main.ts wires in when
 * DISCORD_TOKEN is set.
 */
import { once } from "node:events";
import { Client, Events, GatewayIntentBits, Partials, type Message, type RateLimitData } from "discord.js";
import type { Logger } from "pino";
import type { ChannelCapabilities } from "../../src/envelope.ts";
import type { ChannelAdapter, InboundSink } from "../../src/ports.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { registerSlashCommands } from "./commands.ts";
import { DiscordStartupError, explainLoginFailure } from "./errors.ts";
import { readMessage } from "./inbound.ts";
import { handleInteraction } from "./interactions.ts";
import { createDiscordPort } from "./outbound.ts";
import { createDiscordApproverGroups } from "./approver-groups.ts";
import { ThreadTracker } from "./threads.ts";
import { rememberCardTools } from "../card-tools.ts";

export { DiscordStartupError } from "./errors.ts";

export interface DiscordAdapterOptions {
  /** The bot token (DISCORD_TOKEN). */
  token: string;
  /** REST base URL without the version, e.g. `http://127.0.0.1:1234/api` (DISCORD_API_URL); the gateway URL comes from its GET /gateway/bot. */
  apiUrl?: string;
  /** For multi-bot setups: carried on every envelope and reply target. */
  account?: string;
  log?: Logger;
  /** Only these servers are served (absent: all). */
  allowedGuilds?: string[];
  /** Only these channels (and threads under them) are served (absent: all). */
  allowedChannels?: string[];
  /** Whether a server message must mention the bot, reply to it or be in its thread (default true; `discord.access.mentionGate`). */
  mentionGate?: boolean;
  /** Answer direct messages (default true); the server/channel allowlists do not apply to DMs. */
  allowDirectMessages?: boolean;
  /** Register the bot's commands (/stop, /status, /new, /compact, /always, /help) as slash commands at startup. */
  registerSlashCommands?: boolean;
  /** Rate-limit waits up to this long are waited out by discord.js; longer ones throw RateLimitedError (default 1,000 ms). */
  maxRateLimitWaitMs?: number;
  /** A click is deferred this long after it arrived if the sink has not answered (default 2,000 ms; Discord allows 3 s). */
  ackBudgetMs?: number;
  /** How long to wait for the gateway's READY (default 30 s). */
  readyTimeoutMs?: number;
}

/** What the Discord channel can do. */
export const DISCORD_CAPABILITIES: ChannelCapabilities = {
  threads: true,
  inlineApproval: true,
  edit: true,
  typing: true,
  maxMessageChars: 2000,
  maxButtonPayloadBytes: 100,
};

const INTENTS = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages];

/** Creates the Discord adapter; nothing connects until `start`. */
export function createDiscordAdapter(options: DiscordAdapterOptions): ChannelAdapter {
  const log = options.log ?? silentLogger();
  const threads = new ThreadTracker();
  let client: Client | undefined;
  const rest = () => {
    if (!client) throw new Error("the Discord adapter is not started");
    return client.rest;
  };
  const maxWait = options.maxRateLimitWaitMs ?? 1000;
  const onNoThreads = (channelId: string) =>
    log.warn({ channelId }, "discord: no permission to start threads in this channel (Create Public Threads); answering in the channel as replies");
  const port = { ...createDiscordPort(rest, threads, { onNoThreads }), ...createDiscordApproverGroups(() => client, log) };
  const cardTools = rememberCardTools(port);

  function onMessage(message: Message, sink: InboundSink, botId: string): void {
    try {
      const result = readMessage(message, {
        botId,
        account: options.account,
        capabilities: DISCORD_CAPABILITIES,
        threads,
        allowedGuilds: options.allowedGuilds,
        allowedChannels: options.allowedChannels,
        allowDirectMessages: options.allowDirectMessages ?? true,
        mentionGate: options.mentionGate ?? true,
      });
      if ("skip" in result) {
        log.debug({ messageId: message.id, reason: result.skip }, "discord: message skipped");
        return;
      }
      sink.message(result.envelope).catch((err: unknown) => log.warn({ err: String(err), messageId: message.id }, "discord: sink refused a message"));
    } catch (err) {
      log.warn({ err: String(err), messageId: message.id }, "discord: could not read a message");
    }
  }

  return {
    channel: "discord",
    capabilities: DISCORD_CAPABILITIES,
    pacing: {
      minIntervalMs: 250,
      // Edits of one channel's messages share a route bucket of about five per five seconds.
      editLimits: (target) => [{ key: `edit:${target.account ?? ""}:${target.threadId ?? target.conversationId}`, intervalMs: 1000 }],
    },
    port,

    async start(sink: InboundSink): Promise<void> {
      if (!options.token?.trim()) throw new DiscordStartupError("DISCORD_TOKEN is empty. Set it to your bot's token (Developer Portal → your application → Bot).");
      const c = new Client({
        intents: INTENTS,
        partials: [Partials.Channel],
        rest: {
          ...(options.apiUrl ? { api: options.apiUrl.replace(/\/+$/, "") } : {}),
          // Long waits go back to the delivery queue as RateLimitedError instead of blocking inside discord.js.
          rejectOnRateLimit: (data: RateLimitData) => data.retryAfter > maxWait,
        },
      });
      client = c;
      c.on(Events.Error, (err) => log.warn({ err: String(err) }, "discord: client error"));
      c.on(Events.ShardDisconnect, (event) => log.warn({ code: event.code }, "discord: gateway closed"));
      c.on(Events.ShardResume, (_id, replayed) => log.info({ replayed }, "discord: gateway resumed"));
      c.on(Events.MessageCreate, (message) => {
        if (c.user) onMessage(message, sink, c.user.id);
      });
      const interactionContext = { sink, log, capabilities: DISCORD_CAPABILITIES, account: options.account, ackBudgetMs: options.ackBudgetMs ?? 2000, cardTools,
        allowedGuilds: options.allowedGuilds, allowedChannels: options.allowedChannels,
      };
      c.on(Events.InteractionCreate, (interaction) => void handleInteraction(interaction, interactionContext));
      const ready = once(c, Events.ClientReady, { signal: AbortSignal.timeout(options.readyTimeoutMs ?? 30_000) });
      ready.catch(() => undefined);
      try {
        await c.login(options.token);
        await ready;
      } catch (err) {
        client = undefined;
        await c.destroy().catch(() => undefined);
        throw explainLoginFailure(err);
      }
      if (options.registerSlashCommands) {
        await registerSlashCommands(c.rest, c.application!.id, options.allowedGuilds).catch((err: unknown) =>
          log.warn({ err: String(err) }, "discord: could not register slash commands"),
        );
      }
      log.info({ bot: c.user!.tag }, "discord: connected");
    },

    async stop(): Promise<void> {
      const c = client;
      client = undefined;
      await c?.destroy();
    },
  };
}
