/**
 * The optional slash command (`/gatehouse stop|status|new`): acknowledged at once and
 * turned into an envelope whose text is the bot command (`/stop`), so the gateway treats
 * it exactly like the typed command. Anything else gets a usage hint, shown only to the user.
 */
import type { Logger } from "pino";
import { parseEnvelope, parseBotCommand, type ChannelCapabilities } from "../../src/envelope.ts";
import type { InboundSink } from "../../src/ports.ts";
import { conversationKindOf } from "./inbound.ts";

/** The fields of a slash command the adapter reads. */
export interface SlashCommandBody {
  channel_id: string;
  user_id: string;
  user_name?: string;
  command: string;
  text: string;
  trigger_id: string;
}

export interface SlashCommandDeps {
  channel: string;
  account?: string;
  capabilities: ChannelCapabilities;
  log: Logger;
  sink: () => InboundSink | undefined;
}

type Ack = (response?: { response_type?: "ephemeral"; text: string }) => Promise<void>;

/** Handles one slash command: ack (with a hint when it is not a bot command), then forward it. */
export async function handleSlashCommand(body: SlashCommandBody, ack: Ack, deps: SlashCommandDeps): Promise<void> {
  const word = body.text.trim().split(/\s+/)[0]?.replace(/^\//, "") ?? "";
  const command = parseBotCommand(`/${word}`);
  const sink = deps.sink();
  if (!command || !sink) {
    await ack({ response_type: "ephemeral", text: `Usage: ${body.command} stop | status | new` });
    return;
  }
  await ack();
  try {
    await sink.message(parseEnvelope({
      id: `${body.channel_id}:cmd:${body.trigger_id}`,
      channel: deps.channel,
      account: deps.account,
      conversation: { id: body.channel_id, kind: conversationKindOf(body.channel_id) },
      sender: { id: body.user_id, name: body.user_name, isBot: false },
      mentioned: true,
      text: `/${command}`,
      replyTo: { channel: deps.channel, account: deps.account, conversationId: body.channel_id },
      receivedAt: Date.now(),
      capabilities: deps.capabilities,
    }));
  } catch (err) {
    deps.log.warn({ err: String(err) }, "slash command not delivered to the gateway");
  }
}
