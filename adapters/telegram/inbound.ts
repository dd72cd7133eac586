/**
 * Turns a raw Telegram update into what the gateway understands: an IngressEnvelope for a message
 * addressed to the bot (a DM, a mention, a reply to the bot, one of its commands, or a follow-up in a
 * forum topic the bot posted in), a callback query for a button click, or a reason to ignore it.
 * With the mention gate off, every group message goes to the gateway, marked with whether it was
 * addressed. Validates the update with zod first. An album (photos sharing a `media_group_id`) is
 * one message: every part gets the same envelope id, so the gateway's dedupe answers it once. A
 * location, contact, poll or sticker in a private chat is passed on as a line saying what was sent
 * and what the bot reads, so the person gets an answer instead of silence. An anonymous admin (or
 * someone posting as a channel) is answered as the chat they speak for; a linked channel's posts
 * that Telegram forwards into its discussion group are not messages to the bot.
 */
import { z } from "zod";
import { parseEnvelope, type ChannelCapabilities, type ConversationKind, type IngressEnvelope } from "../../src/envelope.ts";

const UserSchema = z.object({
  id: z.number().int(),
  is_bot: z.boolean(),
  first_name: z.string(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

const EntitySchema = z.object({ type: z.string(), offset: z.number().int(), length: z.number().int(), user: UserSchema.optional() });

const MessageSchema = z.object({
  message_id: z.number().int(),
  chat: z.object({ id: z.number().int(), type: z.enum(["private", "group", "supergroup", "channel"]), is_forum: z.boolean().optional() }),
  from: UserSchema.optional(),
  // Sent on behalf of a chat: the group itself (an anonymous admin) or a channel the person posts as.
  sender_chat: z.object({ id: z.number().int(), title: z.string().optional(), username: z.string().optional() }).optional(),
  // A linked channel's post that Telegram copied into its discussion group.
  is_automatic_forward: z.boolean().optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(EntitySchema).optional(),
  caption_entities: z.array(EntitySchema).optional(),
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
  reply_to_message: z.object({ message_id: z.number().int(), from: UserSchema.optional(), text: z.string().optional() }).optional(),
  // Media without a caption: only which kind it is matters (the bot reads text).
  photo: z.unknown().optional(),
  voice: z.unknown().optional(),
  audio: z.unknown().optional(),
  video: z.unknown().optional(),
  video_note: z.unknown().optional(),
  document: z.unknown().optional(),
  sticker: z.looseObject({ emoji: z.string().optional() }).optional(),
  media_group_id: z.string().optional(),
  // Kinds whose few words can be written out for the model.
  location: z.looseObject({ latitude: z.number(), longitude: z.number() }).optional(),
  venue: z.looseObject({ title: z.string(), address: z.string() }).optional(),
  contact: z.looseObject({ phone_number: z.string(), first_name: z.string(), last_name: z.string().optional() }).optional(),
  poll: z.looseObject({ question: z.string(), options: z.array(z.looseObject({ text: z.string() })) }).optional(),
});

const MEDIA_KINDS = ["photo", "voice", "audio", "video", "video_note", "document"] as const;

/** What the bot can take in, said to the model so that its answer tells the person. */
const READS = "This bot reads text messages and captions only.";

const CallbackQuerySchema = z.object({
  id: z.string(),
  from: UserSchema,
  data: z.string().optional(),
  message: z
    .object({ message_id: z.number().int(), chat: z.object({ id: z.number().int() }), message_thread_id: z.number().int().optional(), is_topic_message: z.boolean().optional() })
    .optional(),
});

const UpdateSchema = z.object({
  update_id: z.number().int().nonnegative(),
  message: MessageSchema.optional(),
  callback_query: CallbackQuerySchema.optional(),
});

export type TelegramUpdate = z.infer<typeof UpdateSchema>;
export type TelegramUser = z.infer<typeof UserSchema>;
export type TelegramCallbackQuery = z.infer<typeof CallbackQuerySchema>;
export type TelegramMessage = z.infer<typeof MessageSchema>;

/** Reads an update's id without trusting the rest of it (for the offset watermark). */
export function updateIdOf(raw: unknown): number | undefined {
  const id = (raw as { update_id?: unknown } | null)?.update_id;
  return typeof id === "number" && Number.isInteger(id) ? id : undefined;
}

/** Validates a raw update; undefined when it is not one we can read. */
export function parseUpdate(raw: unknown): TelegramUpdate | undefined {
  const parsed = UpdateSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

export interface InboundContext {
  bot: { id: number; username: string };
  account?: string;
  capabilities: ChannelCapabilities;
  /** Whether the bot has posted in this chat's topic already. */
  botPostedIn(chatId: string, threadId: string | undefined): boolean;
  /** Drop group messages that do not address the bot (default true); false forwards them unaddressed. */
  mentionGate?: boolean;
}

export type InboundEvent =
  | { kind: "message"; chatId: string; envelope: IngressEnvelope }
  | { kind: "click"; query: TelegramCallbackQuery }
  | { kind: "ignored"; reason: string };

// Without @botname in a group: these are ours; a bare /help or /start there may be meant for another bot.
const OUR_COMMANDS = new Set(["stop", "status", "new", "compact", "always"]);

/** The display name of a Telegram user. */
export function displayName(user: TelegramUser): string {
  return [user.first_name, user.last_name].filter(Boolean).join(" ") || user.username || String(user.id);
}

/** Classifies an update: a message for the gateway, a click, or ignored (with why). */
export function classifyUpdate(update: TelegramUpdate, ctx: InboundContext): InboundEvent {
  if (update.callback_query) return { kind: "click", query: update.callback_query };
  if (!update.message) return { kind: "ignored", reason: "not a new message or click" };
  return classifyMessage(update.message, ctx);
}

function classifyMessage(msg: TelegramMessage, ctx: InboundContext): InboundEvent {
  if (msg.chat.type === "channel") return { kind: "ignored", reason: "channel post" };
  if (msg.is_automatic_forward) return { kind: "ignored", reason: "a linked channel's post forwarded by Telegram" };
  if (!msg.from) return { kind: "ignored", reason: "no sender" };
  const sender = senderOf(msg);
  if (!sender) return { kind: "ignored", reason: "sent by a bot" };
  const media = MEDIA_KINDS.find((k) => msg[k] !== undefined);
  const album = msg.media_group_id;
  // In a private chat a photo or voice message without text still gets an answer (the model says what it can do).
  const wordless = msg.chat.type === "private" ? (album ? "(sent an album without text)" : nonTextMessage(msg, media)) : undefined;
  const rawText = msg.text ?? msg.caption ?? wordless;
  if (rawText === undefined) return { kind: "ignored", reason: "no text (service message or media)" };
  const entities = (msg.text !== undefined ? msg.entities : msg.caption_entities) ?? [];
  const botName = `@${ctx.bot.username}`.toLowerCase();

  const mentionSpans = entities.filter(
    (e) =>
      (e.type === "mention" && rawText.slice(e.offset, e.offset + e.length).toLowerCase() === botName) ||
      (e.type === "text_mention" && e.user?.id === ctx.bot.id),
  );
  const command = entities.find((e) => e.type === "bot_command" && e.offset === 0);
  const commandText = command ? rawText.slice(0, command.length) : undefined;
  const [commandName, commandTarget] = commandText ? commandText.slice(1).split("@") : [];
  const isOurCommand =
    commandName !== undefined &&
    (commandTarget !== undefined ? `@${commandTarget}`.toLowerCase() === botName : OUR_COMMANDS.has(commandName.toLowerCase()));

  if (commandTarget !== undefined && !isOurCommand) return { kind: "ignored", reason: "a command for another bot" };
  const isTopic = msg.is_topic_message === true && msg.message_thread_id !== undefined;
  const threadId = isTopic ? String(msg.message_thread_id) : undefined;
  // In a forum every topic message "replies" to the topic's first message; that is not a reply to the
  // bot. (Outside topics a reply carries its chain's first message as message_thread_id: a real reply.)
  const reply = msg.reply_to_message && !(isTopic && msg.reply_to_message.message_id === msg.message_thread_id) ? msg.reply_to_message : undefined;
  const repliedToBot = reply?.from?.id === ctx.bot.id;
  const kind: ConversationKind = msg.chat.type === "private" ? "dm" : "group";
  const mentioned = kind === "dm" || mentionSpans.length > 0 || repliedToBot || isOurCommand;
  const chatId = String(msg.chat.id);
  const inBotThread = ctx.botPostedIn(chatId, threadId);
  // Topic messages go on unaddressed: the gateway knows (from stored history) whether the bot already
  // talks in that topic, which this process may have forgotten across a restart.
  if (!mentioned && !inBotThread && !isTopic && ctx.mentionGate !== false) {
    return { kind: "ignored", reason: "group message not addressed to the bot" };
  }

  const envelope = parseEnvelope({
    // Every photo of an album arrives as its own message; one id makes them one message to the gateway.
    id: album ? `${chatId}:album:${album}` : `${chatId}:${msg.message_id}`,
    channel: "telegram",
    ...(ctx.account ? { account: ctx.account } : {}),
    conversation: { id: chatId, kind, ...(threadId ? { threadId } : {}) },
    sender,
    mentioned,
    repliedToBot,
    inBotThread,
    text: stripSpans(rawText, mentionSpans),
    replyTo: {
      channel: "telegram",
      ...(ctx.account ? { account: ctx.account } : {}),
      conversationId: chatId,
      ...(threadId ? { threadId } : {}),
      replyToMessageId: String(msg.message_id),
    },
    receivedAt: Date.now(),
    capabilities: ctx.capabilities,
  });
  return { kind: "message", chatId, envelope };
}

/**
 * Who wrote a message: the person, or — for an anonymous admin or someone posting as a channel,
 * where `from` is Telegram's placeholder bot — the chat they speak for. Undefined for a bot.
 */
function senderOf(msg: TelegramMessage): IngressEnvelope["sender"] | undefined {
  const on = msg.sender_chat;
  if (on) {
    const title = on.title ?? (on.username ? `@${on.username}` : String(on.id));
    return { id: String(on.id), name: on.id === msg.chat.id ? `${title} (anonymous admin)` : title, isBot: false };
  }
  if (!msg.from || msg.from.is_bot) return undefined;
  return { id: String(msg.from.id), name: displayName(msg.from), isBot: false };
}

/** The line standing for a message without text in a private chat, or undefined for a service message. */
function nonTextMessage(msg: TelegramMessage, media: (typeof MEDIA_KINDS)[number] | undefined): string | undefined {
  if (media) return `(sent a ${media.replace("_", " ")} without text)`;
  if (msg.sticker) return `(sent a ${msg.sticker.emoji ? `${msg.sticker.emoji} ` : ""}sticker. ${READS})`;
  if (msg.venue) return `(sent a place: ${msg.venue.title}, ${msg.venue.address}. ${READS})`;
  if (msg.location) return `(sent a location: ${msg.location.latitude}, ${msg.location.longitude}. ${READS})`;
  if (msg.contact) {
    const name = [msg.contact.first_name, msg.contact.last_name].filter(Boolean).join(" ");
    return `(sent a contact card: ${name}, ${msg.contact.phone_number}. ${READS})`;
  }
  if (msg.poll) return `(sent a poll: "${msg.poll.question}" with the options ${msg.poll.options.map((o) => `"${o.text}"`).join(", ")}. ${READS})`;
  return undefined;
}

/** Removes the bot's own mentions (offsets are UTF-16, like JS strings) and tidies the spaces left behind. */
function stripSpans(text: string, spans: Array<{ offset: number; length: number }>): string {
  let out = text;
  for (const span of [...spans].sort((a, b) => b.offset - a.offset)) {
    out = out.slice(0, span.offset) + out.slice(span.offset + span.length);
  }
  return out.replace(/[ \t]{2,}/g, " ").replace(/^[\s,:]+/, "").trim();
}
