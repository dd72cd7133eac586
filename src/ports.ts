/**
 * The outbound port every channel adapter implements, and the adapter's lifecycle.
 * The gateway, delivery and approval code talk to channels only through these types.
 */
import type {
  ApprovalClick,
  ApprovalClickOutcome,
  ChannelCapabilities,
  IngressEnvelope,
  ReplyTarget,
} from "./envelope.ts";
import type { ApprovalCard, ApprovalResolution } from "./approval/card.ts";

export interface SentMessage {
  /** The platform's id of the posted message (Slack ts, Discord/Telegram message id). */
  id: string;
}

/**
 * What a 429 holds back, as the platform named it: only the target the call went to, every thread
 * of its conversation (a Telegram chat, a Slack channel), or everything the bot sends on the channel
 * (Discord's global limit). Nothing else waits.
 */
export type RateLimitScope = "target" | "conversation" | "bot";

/** Thrown by a port when the platform answered 429; delivery waits `retryAfterMs` and retries. */
export class RateLimitedError extends Error {
  readonly retryAfterMs: number;
  readonly scope: RateLimitScope;
  constructor(retryAfterMs: number, message = `rate limited; retry after ${retryAfterMs} ms`, scope: RateLimitScope = "target") {
    super(message);
    this.name = "RateLimitedError";
    this.retryAfterMs = retryAfterMs;
    this.scope = scope;
  }
}

/** Thrown by a port when the platform refused the message for its content (too long, bad markup). */
export class MessageRejectedError extends Error {
  readonly reason: "too_long" | "bad_markup" | "other";
  constructor(reason: "too_long" | "bad_markup" | "other", message: string) {
    super(message);
    this.name = "MessageRejectedError";
    this.reason = reason;
  }
}

export interface OutboundText {
  /** Markdown as the model wrote it (or plain text); the port converts it to the platform's format. */
  text: string;
  /** Send without any markup conversion (used to retry after a markup rejection). */
  plain?: boolean;
  /**
   * What the message is: progress lines, a notice (queued, refused), or the reply that answers a
   * message (the final answer, an error, a command's answer). Exactly one reply ends each message.
   */
  kind?: "progress" | "notice" | "reply";
}

/** How a channel sends things. Methods may throw RateLimitedError or MessageRejectedError. */
export interface OutboundPort {
  /** Posts a threaded reply. */
  send(target: ReplyTarget, message: OutboundText): Promise<SentMessage>;
  /** Replaces the text of a posted message (only when capabilities.edit). */
  edit?(target: ReplyTarget, messageId: string, message: OutboundText): Promise<void>;
  /** Renders an approval card with Approve · Always · Deny buttons in the thread. */
  requestApproval?(target: ReplyTarget, card: ApprovalCard): Promise<SentMessage>;
  /** Edits the card to show the decision and who made it, and removes the buttons. */
  resolveApproval?(target: ReplyTarget, messageId: string, card: ApprovalCard, resolution: ApprovalResolution): Promise<void>;
  /** Shows a typing / working indicator once; the caller refreshes it. */
  typing?(target: ReplyTarget): Promise<void>;
  /** Clears a working status, where the platform has one that does not expire by itself. */
  clearTyping?(target: ReplyTarget): Promise<void>;
}

/** Per-target pacing and progress style, declared by the adapter. */
export interface DeliveryPacing {
  /** At most one message every `minIntervalMs` to one target. */
  minIntervalMs: number;
  /** A stricter interval for some targets (Telegram groups: 20 messages a minute). */
  intervalFor?(target: ReplyTarget): number;
  /**
   * Limits shared by several targets: every send to `target` takes a slot from each named limit
   * (Telegram: one per chat across its topics). Keys are per channel. Only a limit the platform
   * documents belongs here; a bot-wide gap below the platform's own limit would let one busy chat
   * slow every other.
   */
  sharedLimits?(target: ReplyTarget): Array<{ key: string; intervalMs: number }>;
  /** `edit`: progress lines grow one message edited in place, instead of one message per batch. */
  progressMode?: "lines" | "edit";
  /**
   * Targets whose platform does not state its limit (Telegram private chats): their interval and
   * shared limits apply only for a while after the platform answered 429 in that conversation, so
   * the bot sends as fast as the platform takes and slows down only where it was told to.
   */
  paceOnlyAfterRateLimit?(target: ReplyTarget): boolean;
}

/** What an adapter hands inbound events to. Implemented by the gateway. */
export interface InboundSink {
  /** A message; the promise settles once it is accepted (or refused), not when the turn ends. */
  message(envelope: IngressEnvelope): Promise<void>;
  /** An approval click. Resolve fast: platforms have an ack deadline. */
  approvalClick(click: ApprovalClick): Promise<ApprovalClickOutcome>;
}

/** A channel adapter: connects to its platform, feeds the sink, and sends through its port. */
export interface ChannelAdapter {
  readonly channel: string;
  readonly capabilities: ChannelCapabilities;
  readonly port: OutboundPort;
  /** How delivery paces and shows things on this channel. */
  readonly pacing: DeliveryPacing;
  /**
   * Asks the person at this channel a question and resolves with their answer. Only channels
   * with a person at a prompt (the console) have it; approvals there are asked directly.
   */
  prompt?(question: string, signal: AbortSignal): Promise<string>;
  /** Whether the connection still works; `detail` says what broke and how to fix it (shown by `gatehouse status`). */
  health?(): { ok: boolean; detail?: string };
  /** Connects and starts feeding `sink`; rejects with a clear message if the token is wrong. */
  start(sink: InboundSink): Promise<void>;
  stop(): Promise<void>;
}
