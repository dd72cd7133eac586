/**
 * The outbound port every channel adapter implements, and the adapter's lifecycle.
 * The gateway, delivery and approval code talk to channels only through these types.
 */
import type {
  ApprovalClick,
  ApprovalClickOutcome,
  ButtonClick,
  ChannelCapabilities,
  IngressEnvelope,
  ReplyTarget,
} from "./envelope.ts";
import type { ApprovalCard, ApprovalResolution } from "./approval/card.ts";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";

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
   * With `plain`: the text is someone else's words (an MCP server's question) and must show exactly
   * as written, never as markup, links or mentions; a platform that reads markup in plain text too
   * (Discord) escapes it.
   */
  literal?: boolean;
  /**
   * What the message is: progress lines, a notice (queued, refused), or the reply that answers a
   * message (the final answer, an error, a command's answer). Exactly one reply ends each message.
   */
  kind?: "progress" | "notice" | "reply";
  /**
   * Buttons under the message, in order; each adapter lays them out within its platform's limits
   * (Slack: an actions block; Discord: rows of five; Telegram: an inline keyboard). A click comes back
   * through `InboundSink.buttonClick`. On an edit, `[]` removes the message's buttons and absent
   * leaves the platform's default (plain text edits of progress messages never carry any).
   */
  buttons?: MessageButton[];
}

/** A button under a message (not an approval card's): its payload comes back on click. */
export interface MessageButton {
  label: string;
  /** `ghb:<kind>:<data>` (envelope.ts `encodeButtonPayload`), at most 64 bytes. */
  payload: string;
  style?: "primary" | "danger";
}

/** What a message-button click did, for the adapter to show. */
export interface ButtonClickOutcome {
  /** Shown only to the person who clicked (ephemeral reply, alert). */
  message?: string;
  /** The clicked message's new text and buttons. */
  replace?: OutboundText;
}

/** How a channel sends things. Methods may throw RateLimitedError or MessageRejectedError. */
export interface OutboundPort {
  /** Posts a threaded reply. */
  send(target: ReplyTarget, message: OutboundText): Promise<SentMessage>;
  /** Replaces the text of a posted message (only when capabilities.edit). */
  edit?(target: ReplyTarget, messageId: string, message: OutboundText): Promise<void>;
  /** Renders an approval card with Approve · Always · Deny · Deny with reason… buttons in the thread. */
  requestApproval?(target: ReplyTarget, card: ApprovalCard): Promise<SentMessage>;
  /** Edits the card to show the decision and who made it, and removes the buttons. */
  resolveApproval?(target: ReplyTarget, messageId: string, card: ApprovalCard, resolution: ApprovalResolution): Promise<void>;
  /**
   * Shows a typing / working indicator once; the caller refreshes it. `status` says what the task
   * does now ("is running shell…") where the platform shows words (Slack's assistant thread status).
   */
  typing?(target: ReplyTarget, status?: string): Promise<void>;
  /** Clears a working status, where the platform has one that does not expire by itself. */
  clearTyping?(target: ReplyTarget): Promise<void>;
  /** A link that opens a posted message (an approval card), where the platform has one. */
  permalink?(target: ReplyTarget, messageId: string): Promise<string | undefined>;
  /**
   * Whether `userId` belongs to one of the groups or roles `of` names, or administers `conversationId`
   * when `of.chatAdmins` (approver rules). Answers from a short-lived cache. Rejects with an
   * ApproverCheckError when the platform could not be asked (an outage, a rate limit): "not an
   * approver" would tell a real approver they may not decide.
   */
  isApprover?(conversationId: string, userId: string, of: ApproverGroups): Promise<boolean>;
  /** Of the groups and roles `of` names, those the platform does not know (a rule naming one is refused at start). */
  unknownApproverGroups?(of: ApproverGroups): Promise<string[]>;
}

/**
 * Who may approve besides named people, as an approver rule names them: platform groups (Slack user
 * groups), roles (Discord roles) and the conversation's administrators (Telegram chat admins; Slack
 * workspace admins; Discord members with the Administrator permission).
 */
export interface ApproverGroups {
  groups: string[];
  roles: string[];
  chatAdmins: boolean;
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
  /**
   * The platform's budget for edits of a posted message (a task's live status message): every edit
   * takes a slot from each named limit (Slack: chat.update per workspace; Telegram: per chat). Default:
   * one edit per `minIntervalMs` per target. Edits coalesce while they wait for their slot.
   */
  editLimits?(target: ReplyTarget): Array<{ key: string; intervalMs: number }>;
  /** In the `lines` progress style, `edit`: progress lines grow one message edited in place, instead of one message per batch. */
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
  /** A click on a message button (`ghb:` payload); absent where nothing handles them. Resolve fast, like an approval click. */
  buttonClick?(click: ButtonClick): Promise<ButtonClickOutcome>;
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
  prompt?(question: string, signal: AbortSignal, options?: PromptOptions): Promise<string>;
  /**
   * Shows a line to the person at this channel outside any conversation (a start-up warning, such as
   * an MCP server that did not start). Only channels with a person at a prompt (the console) have it.
   */
  notice?(text: string): void;
  /** Whether the connection still works; `detail` says what broke and how to fix it (shown by `gatehouse status`). */
  health?(): { ok: boolean; detail?: string };
  /** Connects and starts feeding `sink`; rejects with a clear message if the token is wrong. */
  start(sink: InboundSink): Promise<void>;
  stop(): Promise<void>;
}

/** Answers one HTTP request that reached a mounted route. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The process's one HTTP server (on PORT), as an adapter sees it: where it mounts the endpoint its
 * platform posts to (Slack's Events API, the Telegram webhook), beside `/healthz` and `/readyz`.
 */
export interface HttpRoutes {
  /**
   * Serves `method` requests to exactly `path` (the query string aside) with `handler`, or to every
   * path one level below it when `path` ends in `/*`; throws when the path is taken. Returns the function that takes the route down again (at the channel's stop).
   */
  mount(method: "GET" | "POST", path: string, handler: HttpHandler): () => void;
  /** Where the server can be reached from this machine, e.g. `http://127.0.0.1:3000` (no trailing slash). */
  readonly localUrl: string;
}

/**
 * A channel's settings a person must fix (a missing token, a secret required with another setting):
 * thrown by an adapter's `fromConfig`, reported by the bot like any configuration error.
 */
export class ChannelSetupError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join("\n"));
    this.name = "ChannelSetupError";
    this.problems = problems;
  }
}

/**
 * What an adapter's `fromConfig` receives: its own section of the configuration, as it declares it,
 * and what the process shares with every channel. Each adapter folder owns how it is built from it,
 * so a new platform touches its folder and one registration line in main.ts.
 */
export interface ChannelSetup<Settings> {
  /** The channel's section of the config (`config.slack`, `config.telegram`, …). */
  settings: Settings;
  log: Logger;
  /** The shared HTTP server, when PORT is set: receivers mount their endpoint there instead of listening. */
  http?: HttpRoutes;
  /** The bind address for a receiver that listens on a port of its own (HOST); the adapter's default when absent. */
  httpHost?: string;
  /** Small named values kept in the store across restarts (the Telegram update offset); `list` gives those whose key starts with `prefix`. */
  values: {
    get(key: string): Promise<string | undefined>;
    set(key: string, value: string): Promise<void>;
    list(prefix: string): Promise<Array<{ key: string; value: string }>>;
    delete(key: string): Promise<void>;
  };
  /** How long an approval card waits for a decision (`approval.timeoutMs`). */
  approvalTimeoutMs?: number;
  /** Asks the bot to shut down once what was asked is answered (the console's input ended). */
  onShutdownRequest?: () => void;
}

export interface PromptOptions {
  /**
   * The question outlives the session at the prompt: when the bot stops or the person quits, it is
   * left open (the store keeps it, and the next start asks it again) rather than answered "".
   */
  keep?: boolean;
}

/** The platform could not say whether someone is an approver (see OutboundPort.isApprover). */
export class ApproverCheckError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ApproverCheckError";
  }
}
