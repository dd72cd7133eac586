/**
 * Turns a Discord message into an IngressEnvelope, or says why it is not for the bot.
 * Handled: every DM, a mention or reply to the bot in a server channel, and anything said in a
 * thread the bot takes part in. A mention in a text channel is answered in a new thread whose
 * id is the message id (see threads.ts), so the first message and every follow-up in that
 * thread share one session key: `discord:<channel id>:<thread id>`.
 */
import { ChannelType, MessageType, type Message } from "discord.js";
import { parseEnvelope, type ChannelCapabilities, type IngressEnvelope } from "../../src/envelope.ts";
import type { ThreadTracker } from "./threads.ts";

/** What the adapter knows when it reads a message. */
export interface InboundContext {
  botId: string;
  account?: string;
  capabilities: ChannelCapabilities;
  threads: ThreadTracker;
  allowedGuilds?: string[];
  allowedChannels?: string[];
  allowDirectMessages: boolean;
  /** Whether a server message must address the bot (false: the gateway's access rules decide alone). */
  mentionGate?: boolean;
}

export type InboundResult = { envelope: IngressEnvelope } | { skip: string };

/** Channel types where the bot starts a thread on the user's message. */
const THREADABLE = new Set<ChannelType>([ChannelType.GuildText, ChannelType.GuildAnnouncement]);
const USER_MESSAGE_TYPES = new Set<MessageType>([MessageType.Default, MessageType.Reply]);

/** Removes the bot's own mention (`<@id>`, `<@!id>`, or its managed role `<@&role>`) from the text. */
export function stripBotMention(text: string, botId: string, botRoleId?: string): string {
  const role = botRoleId ? `|<@&${botRoleId}>` : "";
  return text.replace(new RegExp(`<@!?${botId}>${role}`, "g"), "").replace(/[ \t]{2,}/g, " ").trim();
}

/**
 * Why the allowlists leave this server channel (or thread, by its parent) unserved, or undefined
 * when it is served.
 */
export function notServed(
  allow: { allowedGuilds?: string[]; allowedChannels?: string[] },
  guildId: string,
  channelId: string,
  parentId: string | undefined,
): string | undefined {
  if (allow.allowedGuilds && !allow.allowedGuilds.includes(guildId)) return "server not in allowedGuilds";
  if (allow.allowedChannels && !allow.allowedChannels.includes(channelId) && !(parentId && allow.allowedChannels.includes(parentId))) {
    return "channel not in allowedChannels";
  }
  return undefined;
}

/** Reads a message; returns the envelope, or the reason it is dropped (for the debug log). */
export function readMessage(message: Message, ctx: InboundContext): InboundResult {
  if (message.author.bot || message.webhookId) return { skip: "from a bot or webhook" };
  if (!USER_MESSAGE_TYPES.has(message.type)) return { skip: `system message type ${message.type}` };
  const channel = message.channel;
  const isDm = !message.guildId;
  if (isDm && !ctx.allowDirectMessages) return { skip: "direct messages are switched off" };
  const parentId = channel.isThread() ? channel.parentId ?? undefined : undefined;
  if (!isDm) {
    const refused = notServed(ctx, message.guildId!, message.channelId, parentId);
    if (refused) return { skip: refused };
  }

  // Typing @Bot in a server often inserts the bot's managed role (<@&role>) rather than the user.
  const botRoleId = message.guild?.members.me?.roles.botRole?.id;
  const mentioned = new RegExp(`<@!?${ctx.botId}>`).test(message.content) || (botRoleId !== undefined && message.mentions.roles.has(botRoleId));
  const repliedToBot = message.mentions.repliedUser?.id === ctx.botId;
  const inBotThread = channel.isThread() && (ctx.threads.isBotThread(channel.id) || channel.ownerId === ctx.botId);
  // A thread the bot answered in before a restart is not in the tracker: the gateway knows it from the
  // session's history, so thread messages go on and it decides.
  if (!isDm && !mentioned && !repliedToBot && !inBotThread && !channel.isThread() && ctx.mentionGate !== false) return { skip: "not addressed to the bot" };

  const text = stripBotMention(message.content, ctx.botId, botRoleId);
  let conversation: IngressEnvelope["conversation"];
  let replyTo: IngressEnvelope["replyTo"];
  if (isDm) {
    conversation = { id: message.channelId, kind: "dm" };
    replyTo = { channel: "discord", conversationId: message.channelId, replyToMessageId: message.id };
  } else if (channel.isThread()) {
    conversation = { id: parentId ?? message.channelId, threadId: message.channelId, kind: "channel" };
    replyTo = { channel: "discord", conversationId: message.channelId, threadId: message.channelId, replyToMessageId: message.id };
  } else if (THREADABLE.has(channel.type)) {
    ctx.threads.expect(message.id, message.channelId, text);
    conversation = { id: message.channelId, threadId: message.id, kind: "channel" };
    replyTo = { channel: "discord", conversationId: message.id, threadId: message.id, replyToMessageId: message.id };
  } else {
    conversation = { id: message.channelId, kind: "channel" };
    replyTo = { channel: "discord", conversationId: message.channelId, replyToMessageId: message.id };
  }
  const account = ctx.account ? { account: ctx.account } : {};
  const envelope = parseEnvelope({
    id: message.id,
    channel: "discord",
    ...account,
    conversation,
    sender: { id: message.author.id, name: message.member?.displayName ?? message.author.globalName ?? message.author.username, isBot: false },
    mentioned: isDm || mentioned,
    repliedToBot,
    inBotThread: Boolean(inBotThread),
    text,
    replyTo: { ...replyTo, ...account },
    receivedAt: Date.now(),
    capabilities: ctx.capabilities,
  });
  return { envelope };
}
