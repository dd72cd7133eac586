/**
 * The optional slash command (`/gatehouse stop|status|new|compact|always`): validated at the boundary,
 * acknowledged at once and turned into an envelope whose text is the bot command (`/stop`),
 * so the gateway treats it exactly like the typed command. Anything else gets a usage hint,
 * and a payload without its user or channel a short error, both shown only to the user.
 * Nothing a payload carries makes the handler throw.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Logger } from "pino";
import { BotCommandSchema, parseEnvelope, parseBotCommand, type ChannelCapabilities } from "../../src/envelope.ts";
import type { InboundSink } from "../../src/ports.ts";
import type { CommandReplies } from "./command-replies.ts";
import { conversationKindOf } from "./inbound.ts";

/** Shown (ephemeral) when a slash command arrives without the user or channel it came from. */
export const UNREADABLE_COMMAND = "Gatehouse could not read this command. Please try again.";

/** Shown (ephemeral) when a valid command arrives before the adapter has a gateway to give it to. */
export const NOT_READY = "Gatehouse is starting; try again in a moment.";

/** The fields of a slash command the adapter reads; only the user and channel are required. */
const SlashCommandSchema = z.object({
  channel_id: z.string().min(1),
  user_id: z.string().min(1),
  user_name: z.string().nullish(),
  command: z.string().nullish(),
  // A bare `/gatehouse` may arrive with the text missing altogether: an empty subcommand.
  text: z.string().nullish(),
  trigger_id: z.string().nullish(),
  response_url: z.string().url().nullish().catch(undefined),
});

export interface SlashCommandDeps {
  channel: string;
  account?: string;
  /** The command this adapter answers (`/gatehouse`), named in the usage hint. */
  commandName: string;
  capabilities: ChannelCapabilities;
  log: Logger;
  sink: () => InboundSink | undefined;
  /** Keeps each command's response_url, for answering where the bot cannot post. */
  replies?: CommandReplies;
}

type Ack = (response?: { response_type?: "ephemeral"; text: string }) => Promise<void>;

/** The usage hint for the slash command, shown only to the person who ran it. */
export function slashCommandUsage(commandName: string): string {
  return `Usage: ${commandName} ${BotCommandSchema.options.join(" | ")}`;
}

/** Handles one slash command body as Slack sent it: ack (with a hint or an error when needed), then forward it. */
export async function handleSlashCommand(body: unknown, ack: Ack, deps: SlashCommandDeps): Promise<void> {
  const tell = (text: string) => ack({ response_type: "ephemeral", text });
  try {
    const parsed = SlashCommandSchema.safeParse(body);
    if (!parsed.success) {
      const fields = [...new Set(parsed.error.issues.map((i) => String(i.path[0] ?? "(body)")))];
      deps.log.warn({ fields }, "slash command without the fields it needs; answered with an error");
      return await tell(UNREADABLE_COMMAND);
    }
    const b = parsed.data;
    const word = (b.text ?? "").trim().split(/\s+/)[0]?.replace(/^\//, "") ?? "";
    const command = parseBotCommand(`/${word}`);
    if (!command) return await tell(slashCommandUsage(b.command || deps.commandName));
    const sink = deps.sink();
    if (!sink) return await tell(NOT_READY);
    await ack();
    if (b.response_url) deps.replies?.remember(b.channel_id, b.response_url);
    await sink.message(parseEnvelope({
      id: `${b.channel_id}:cmd:${b.trigger_id || randomUUID()}`,
      channel: deps.channel,
      account: deps.account,
      conversation: { id: b.channel_id, kind: conversationKindOf(b.channel_id) },
      sender: { id: b.user_id, name: b.user_name ?? undefined, isBot: false },
      mentioned: true,
      text: `/${command}`,
      replyTo: { channel: deps.channel, account: deps.account, conversationId: b.channel_id },
      receivedAt: Date.now(),
      capabilities: deps.capabilities,
    }));
  } catch (err) {
    deps.log.warn({ err: String(err) }, "slash command not delivered to the gateway");
  }
}
