/**
 * Turns Slack message / app_mention events into ingress envelopes: which ones count
 * (people only; no edits, joins, bots or Slackbot), where the reply goes (the thread), whether the
 * bot was addressed, and the text as the model should read it.
 */
import { z } from "zod";
import { parseEnvelope, type ChannelCapabilities, type ConversationKind, type IngressEnvelope } from "../../src/envelope.ts";

/** The fields of a Slack message event the adapter reads (validated; anything else is ignored). */
export const SlackMessageEventSchema = z.object({
  type: z.enum(["message", "app_mention"]),
  subtype: z.string().optional(),
  channel: z.string().min(1),
  channel_type: z.string().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional().default(""),
  ts: z.string().min(1),
  thread_ts: z.string().optional(),
  parent_user_id: z.string().optional(),
  // Files shared with the message (subtype file_share): only their names are read.
  files: z.array(z.looseObject({ name: z.string().nullish(), title: z.string().nullish() })).optional().catch(undefined),
});
export type SlackMessageEvent = z.infer<typeof SlackMessageEventSchema>;

/** Subtypes that are still a person writing to the bot; every other subtype (edits, joins, …) is ignored. */
const PERSON_SUBTYPES = new Set(["file_share", "thread_broadcast"]);

/** What the normalizer needs to know about the bot and its threads. */
export interface InboundContext {
  channel: string;
  account?: string;
  botUserId: string;
  botId?: string;
  capabilities: ChannelCapabilities;
  /** True when the bot already posted in this thread. */
  botIsInThread(conversationId: string, threadTs: string): boolean;
  /** Turns Slack text (mentions resolved, entities decoded) into what the model reads. */
  readableText(text: string): Promise<string>;
  senderName(userId: string): Promise<string | undefined>;
  now(): number;
}

/**
 * Slackbot's user id. Its posts ("You have been removed from #…" in a DM) carry no `bot_id`,
 * yet are not a person writing, and answering them fails (`channel_not_found`).
 */
const SLACKBOT = "USLACKBOT";

/** Why an event is dropped, or undefined when it is a person's message. */
export function ignoreReason(event: SlackMessageEvent, botUserId: string, botId?: string): string | undefined {
  if (event.subtype && !PERSON_SUBTYPES.has(event.subtype)) return `subtype ${event.subtype}`;
  if (event.bot_id) return event.bot_id === botId ? "own message" : "bot message";
  if (!event.user) return "no user";
  if (event.user === SLACKBOT) return "Slackbot message";
  if (event.user === botUserId) return "own message";
  return undefined;
}

/** Slack's conversation kind from channel_type, or from the id's prefix (app_mention has no channel_type). */
export function conversationKindOf(channel: string, channelType?: string): ConversationKind {
  const type = channelType ?? (channel.startsWith("D") ? "im" : channel.startsWith("G") ? "group" : "channel");
  if (type === "im") return "dm";
  if (type === "mpim") return "group";
  return "channel";
}

/** Removes the bot's own mention (`<@BOT>` or `<@BOT|name>`) from the text. */
export function stripBotMention(text: string, botUserId: string): string {
  return text.replace(new RegExp(`<@${botUserId}(?:\\|[^>]*)?>[,:]?`, "g"), " ").replace(/[ \t]{2,}/g, " ").trim();
}

/** Slack text → plain text: links and channels shown as a person sees them, entities decoded. */
export function decodeSlackText(text: string): string {
  return text
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, "$2 ($1)")
    .replace(/<((?:https?|mailto):[^>]+)>/g, "$1")
    .replace(/<#[CG][A-Z0-9]+\|([^>]+)>/g, "#$1")
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, "@$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/**
 * The text with a line saying which files came with it, which the bot cannot open: so a file shared
 * without a word still gets an answer, and the model does not pretend to have read one.
 */
function withFiles(text: string, files: SlackMessageEvent["files"]): string {
  if (!files?.length) return text;
  const names = files.map((f) => f.name || f.title || "a file");
  const list = names.length === 1 ? `a file (${names[0]})` : `${names.length} files (${names.join(", ")})`;
  const note = `(shared ${list}. This bot reads the text of messages only; it cannot open files.)`;
  return text.trim() ? `${text}\n${note}` : note;
}

/** Builds the envelope for a person's message; the same post always gets the id `<channel>:<ts>`. */
export async function toEnvelope(event: SlackMessageEvent, ctx: InboundContext): Promise<IngressEnvelope> {
  const user = event.user!;
  const kind = conversationKindOf(event.channel, event.channel_type);
  const threadTs = event.thread_ts ?? event.ts;
  const isReply = event.thread_ts !== undefined && event.thread_ts !== event.ts;
  const repliedToBot = isReply && event.parent_user_id === ctx.botUserId;
  const mentionsBot = new RegExp(`<@${ctx.botUserId}(?:\\|[^>]*)?>`).test(event.text);
  const [said, name] = await Promise.all([ctx.readableText(stripBotMention(event.text, ctx.botUserId)), ctx.senderName(user)]);
  const text = withFiles(said, event.files);
  return parseEnvelope({
    id: `${event.channel}:${event.ts}`,
    channel: ctx.channel,
    account: ctx.account,
    conversation: { id: event.channel, threadId: threadTs, kind },
    sender: { id: user, name, isBot: false },
    mentioned: kind === "dm" || event.type === "app_mention" || mentionsBot,
    repliedToBot,
    inBotThread: isReply && (repliedToBot || ctx.botIsInThread(event.channel, threadTs)),
    text,
    replyTo: { channel: ctx.channel, account: ctx.account, conversationId: event.channel, threadId: threadTs },
    receivedAt: ctx.now(),
    capabilities: ctx.capabilities,
  });
}
