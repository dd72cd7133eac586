/**
 * The ingress envelope: what every channel adapter turns an inbound platform message
 * into, and the small typed action events (button clicks, commands) that travel beside it.
 * Validated with zod once, at the adapter boundary; everything inside trusts the types.
 */
import { z } from "zod";

/** What a channel can do. The engine and gateway read this, never the platform's name. */
export const ChannelCapabilitiesSchema = z.object({
  /** Replies can go into a thread (or a reply chain) of the triggering message. */
  threads: z.boolean(),
  /** The channel can render approval buttons and send the click back. */
  inlineApproval: z.boolean(),
  /** Sent messages can be edited. */
  edit: z.boolean(),
  /** A typing / "is working" indicator exists. */
  typing: z.boolean(),
  /** The longest text one message may carry. */
  maxMessageChars: z.number().int().positive(),
  /** The largest button payload, in bytes (Telegram callback_data: 64). */
  maxButtonPayloadBytes: z.number().int().positive().default(64),
});
export type ChannelCapabilities = z.infer<typeof ChannelCapabilitiesSchema>;

export const ConversationKindSchema = z.enum(["dm", "group", "channel"]);
export type ConversationKind = z.infer<typeof ConversationKindSchema>;

/** Where a reply goes: a conversation, optionally a thread in it, optionally replying to a message. */
export const ReplyTargetSchema = z.object({
  channel: z.string().min(1),
  account: z.string().optional(),
  conversationId: z.string().min(1),
  threadId: z.string().min(1).optional(),
  replyToMessageId: z.string().min(1).optional(),
});
export type ReplyTarget = z.infer<typeof ReplyTargetSchema>;

export const SenderSchema = z.object({
  id: z.string().min(1),
  name: z.string().optional(),
  isBot: z.boolean(),
});
export type Sender = z.infer<typeof SenderSchema>;

export const IngressEnvelopeSchema = z.object({
  /** Platform event id, used for dedupe (Slack event_id or channel:ts, Telegram update_id, Discord message id). */
  id: z.string().min(1),
  channel: z.string().min(1),
  account: z.string().optional(),
  conversation: z.object({
    id: z.string().min(1),
    threadId: z.string().min(1).optional(),
    kind: ConversationKindSchema,
  }),
  sender: SenderSchema,
  /** The bot was addressed: mentioned, replied to, or a DM. */
  mentioned: z.boolean(),
  /** The message is a reply to one of the bot's own messages. */
  repliedToBot: z.boolean().default(false),
  /** The bot already takes part in this thread (adapters that know it set it). */
  inBotThread: z.boolean().default(false),
  text: z.string(),
  replyTo: ReplyTargetSchema,
  receivedAt: z.number().int().nonnegative(),
  capabilities: ChannelCapabilitiesSchema,
  /** Set by the gateway when the envelope enters; carried by every log line of its turn. */
  traceId: z.string().optional(),
  /** A turn nobody typed: a schedule's tick or an API call (no person to ask, unless `approvalTarget`). */
  origin: z.object({ kind: z.enum(["schedule", "api"]), name: z.string().min(1) }).optional(),
  /** Where approval cards go when not in the reply's thread (a schedule's `approvalsTo`). */
  approvalTarget: ReplyTargetSchema.optional(),
});
export type IngressEnvelope = z.infer<typeof IngressEnvelopeSchema>;
export type IngressEnvelopeInput = z.input<typeof IngressEnvelopeSchema>;

/** Parses an adapter's envelope; throws a ZodError naming every bad field. */
export function parseEnvelope(input: unknown): IngressEnvelope {
  return IngressEnvelopeSchema.parse(input);
}

/**
 * The session key of a conversation: `<channel>:<conversation.id>[:<threadId>]`.
 * A Slack top-level message carries its own ts as threadId, so it starts its own session.
 */
export function sessionKeyOf(env: Pick<IngressEnvelope, "channel" | "conversation" | "account">): string {
  const channel = env.account ? `${env.channel}@${env.account}` : env.channel;
  const base = `${channel}:${env.conversation.id}`;
  return env.conversation.threadId ? `${base}:${env.conversation.threadId}` : base;
}

/** The key a delivery queue is kept by: one queue per conversation + thread. */
export function targetKeyOf(target: ReplyTarget): string {
  return [target.channel, target.account ?? "", target.conversationId, target.threadId ?? ""].join(":");
}

export const ApprovalChoiceSchema = z.enum(["approve", "always", "deny"]);
export type ApprovalChoice = z.infer<typeof ApprovalChoiceSchema>;

/** The longest reason for a denial a person can give ("Deny with reason…"), in UTF-16 code units. */
export const MAX_DENIAL_REASON_CHARS = 500;

/** A click on an approval card, as decoded by the adapter from its button payload. */
export const ApprovalClickSchema = z.object({
  channel: z.string().min(1),
  approvalId: z.string().min(1),
  choice: ApprovalChoiceSchema,
  actor: SenderSchema,
  /** The platform id of the clicked card's message, when known. */
  messageId: z.string().optional(),
  conversationId: z.string().optional(),
  /** For `deny`: why, in the denier's words (see `denialReason`); absent for a plain Deny. */
  reason: z.string().max(MAX_DENIAL_REASON_CHARS).optional(),
});
export type ApprovalClick = z.infer<typeof ApprovalClickSchema>;

/**
 * A reason a person typed for a denial, as the model, the audit log and the card get it: each line
 * trimmed, blank lines dropped, cut to MAX_DENIAL_REASON_CHARS (UTF-16 units, never inside a
 * character). Undefined when nothing is left: an empty reason is a plain Deny.
 */
export function denialReason(text: string | undefined): string | undefined {
  const joined = (text ?? "").split(/\r\n?|\n/).map((l) => l.trim()).filter(Boolean).join("\n");
  if (!joined) return undefined;
  if (joined.length <= MAX_DENIAL_REASON_CHARS) return joined;
  const cut = joined.slice(0, MAX_DENIAL_REASON_CHARS - 1);
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/** What happened to a click; the adapter shows `message` to the clicker when `status` is not "accepted". */
export interface ApprovalClickOutcome {
  /** `recorded`: one approval towards a quorum was counted; more people must approve before anything runs. */
  status: "accepted" | "recorded" | "not-allowed" | "already-decided" | "expired" | "unknown";
  message: string;
}

/**
 * Buttons under an ordinary message (not an approval card) carry `ghb:<kind>:<data>`: `kind` names
 * the gateway's handler (`always`: revoke a remembered decision), `data` is the handler's own. The
 * prefix never matches an approval payload (`gh1:`), and the whole fits Telegram's 64 bytes.
 */
const BUTTON_PAYLOAD = /^ghb:([a-z][a-z0-9-]{0,15}):([A-Za-z0-9_.:-]{0,40})$/;

/** The largest message-button payload, in bytes: Telegram's callback_data limit. */
export const MAX_BUTTON_PAYLOAD_BYTES = 64;

/** Encodes a message button's payload; throws when `kind` or `data` would not decode again. */
export function encodeButtonPayload(kind: string, data: string): string {
  const payload = `ghb:${kind}:${data}`;
  if (!BUTTON_PAYLOAD.test(payload)) throw new Error(`not a valid button payload: ${JSON.stringify(payload)}`);
  return payload;
}

/** Decodes a message button's payload; undefined for anything else (an approval button, a forged one). */
export function decodeButtonPayload(payload: string): { kind: string; data: string } | undefined {
  const m = BUTTON_PAYLOAD.exec(payload);
  return m ? { kind: m[1]!, data: m[2]! } : undefined;
}

/** A click on a message button, as the adapter read it from the platform. */
export const ButtonClickSchema = z.object({
  channel: z.string().min(1),
  account: z.string().optional(),
  payload: z.string().refine((p) => decodeButtonPayload(p) !== undefined, { message: "not a message button payload" }),
  actor: SenderSchema,
  /** The platform id of the message the button is on. */
  messageId: z.string().min(1),
  conversationId: z.string().min(1),
  /** The thread the message is in, where the platform has threads. */
  threadId: z.string().min(1).optional(),
});
export type ButtonClick = z.infer<typeof ButtonClickSchema>;

export const BotCommandSchema = z.enum(["stop", "status", "new", "compact", "always", "help"]);
export type BotCommand = z.infer<typeof BotCommandSchema>;

/**
 * Recognizes `/stop`, `/status`, `/new`, `/compact`, `/always`, `/help` (also `/stop@botname`) as the
 * whole message. `/start` — what a Telegram client sends when someone opens a chat with the bot — is
 * `/help`.
 */
export function parseBotCommand(text: string): BotCommand | undefined {
  const m = /^\s*\/(stop|status|new|compact|always|help|start)(?:@\S+)?\s*$/i.exec(text);
  if (!m) return undefined;
  const word = m[1]!.toLowerCase();
  return (word === "start" ? "help" : word) as BotCommand;
}
