/**
 * An in-memory channel for tests: a ChannelAdapter whose "platform" is a list of posted
 * messages. It behaves like a strict platform where tests need one: it refuses text over its
 * limit (too_long), can answer the next N calls with 429, and can enforce "one message per
 * second per target", answering a send that comes too soon with RateLimitedError(remaining ms).
 * It also implements the contract harness, so the channel contract suite runs against it.
 */
import { decodeApprovalPayload, approvalCardText, type ApprovalCard, type ApprovalResolution } from "../../src/approval/card.ts";
import {
  parseEnvelope,
  targetKeyOf,
  type ApprovalChoice,
  type ApprovalClickOutcome,
  type ChannelCapabilities,
  type ConversationKind,
  type IngressEnvelope,
  type ReplyTarget,
} from "../../src/envelope.ts";
import {
  MessageRejectedError,
  RateLimitedError,
  type ApproverGroups,
  type ChannelAdapter,
  type InboundSink,
  type OutboundPort,
  type OutboundText,
  type SentMessage,
} from "../../src/ports.ts";
import type { ChannelHarness, SeenMessage, UserMessageOptions } from "../contract/harness.ts";

/** One message as the memory platform shows it; cards keep their buttons until resolved. */
export interface MemoryMessage {
  id: string;
  conversationId: string;
  threadId?: string;
  text: string;
  kind?: OutboundText["kind"];
  card?: ApprovalCard;
  resolution?: ApprovalResolution;
  sentAt: number;
}

/** How a memory channel is set up: its name, what it can do, and how strict its "platform" is. */
export interface MemoryChannelOptions {
  /** The channel name envelopes carry (default "memory"); "slack" etc. makes the bot apply that channel's access config. */
  channel?: string;
  capabilities?: Partial<ChannelCapabilities>;
  /** Pacing the bot's delivery is told to keep (default 0). */
  minIntervalMs?: number;
  /** When set, a send to a target sooner than this after the previous one is refused with 429. */
  platformMinGapMs?: number;
  /** Each edit takes this long before the platform accepts it (a platform slow to take edits). */
  editDelayMs?: number;
  /** Members of the "platform's" groups and roles (approver rules ask the port): group or role id → user ids. */
  approverGroups?: Record<string, string[]>;
  /** The conversation's administrators, for rules with chatAdmins. */
  chatAdmins?: string[];
}

/** Who says something, and where (defaults: the default user, a top-level post in the default room). */
export interface SayOptions {
  userId?: string;
  userName?: string;
  conversationId?: string;
  /** Post into this thread; default: a top-level post, which the bot answers in a thread of its own. */
  threadId?: string;
  kind?: ConversationKind;
  mentioned?: boolean;
  /** The platform event id (default: a fresh one). */
  eventId?: string;
}

/** The user who speaks unless told otherwise. */
export const MEMORY_USER = "u-alice";
/** The group conversation messages go to unless told otherwise. */
export const MEMORY_ROOM = "room-1";

const DEFAULT_CAPABILITIES: ChannelCapabilities = {
  threads: true,
  inlineApproval: true,
  edit: true,
  typing: false,
  maxMessageChars: 2000,
  maxButtonPayloadBytes: 64,
};

/** The memory channel: adapter, recorded platform state and fault switches. */
export class MemoryChannel implements ChannelAdapter {
  readonly channel: string;
  readonly capabilities: ChannelCapabilities;
  readonly pacing: { minIntervalMs: number };
  readonly port: OutboundPort;
  /** Every message the bot posted, oldest first (cards included). */
  readonly messages: MemoryMessage[] = [];
  /** Every edit the bot made, in order. */
  readonly edits: Array<{ messageId: string; text: string }> = [];
  /** Every card resolution, in order. */
  readonly resolutions: Array<{ messageId: string; resolution: ApprovalResolution }> = [];
  /** Every call the platform refused with 429, and how long it told the bot to wait. */
  readonly rateLimited: Array<{ at: number; retryAfterMs: number }> = [];
  /** Every send the platform refused as too long. */
  readonly rejected: Array<{ length: number }> = [];
  /** Every envelope handed to the bot, in order. */
  readonly delivered: IngressEnvelope[] = [];

  private sink: InboundSink | undefined;
  private nextId = 1;
  private failNext: { count: number; retryAfterMs: number } = { count: 0, retryAfterMs: 0 };
  private readonly lastSendAt = new Map<string, number>();
  private readonly platformMinGapMs: number | undefined;

  constructor(options: MemoryChannelOptions = {}) {
    this.channel = options.channel ?? "memory";
    this.capabilities = { ...DEFAULT_CAPABILITIES, ...options.capabilities };
    this.pacing = { minIntervalMs: options.minIntervalMs ?? 0 };
    this.platformMinGapMs = options.platformMinGapMs;
    const self = this;
    const groups = options.approverGroups;
    this.port = {
      async send(target, message) {
        return self.post(target, message.text, message.kind);
      },
      ...(groups
        ? {
            async isApprover(_conversationId: string, userId: string, of: ApproverGroups) {
              const member = [...of.groups, ...of.roles].some((g) => groups[g]?.includes(userId));
              return member || (of.chatAdmins && (options.chatAdmins ?? []).includes(userId));
            },
            async unknownApproverGroups(of: ApproverGroups) {
              return [...of.groups, ...of.roles].filter((g) => !(g in groups));
            },
          }
        : {}),
      async edit(target, messageId, message) {
        if (options.editDelayMs) await new Promise((r) => setTimeout(r, options.editDelayMs));
        self.gate(target);
        const m = self.find(messageId);
        if (!m) throw new Error(`message not found: ${messageId}`);
        self.checkLength(message.text);
        m.text = message.text;
        self.edits.push({ messageId, text: message.text });
      },
      async requestApproval(target, card) {
        const sent = self.post(target, approvalCardText(card), "notice");
        self.find(sent.id)!.card = card;
        return sent;
      },
      async resolveApproval(target, messageId, _card, resolution) {
        self.gate(target);
        const m = self.find(messageId);
        if (!m) throw new Error(`card not found: ${messageId}`);
        m.resolution = resolution;
        m.text = `${m.text}\n${resolution.text}`;
        self.resolutions.push({ messageId, resolution });
      },
    };
  }

  /** The next `count` platform calls answer 429 with this advised wait. */
  failWithRateLimit(count: number, retryAfterMs: number): void {
    this.failNext = { count, retryAfterMs };
  }

  async start(sink: InboundSink): Promise<void> {
    this.sink = sink;
  }

  async stop(): Promise<void> {
    this.sink = undefined;
  }

  /** A person posts `text`; resolves once the bot accepted (or refused) it, not when it answered. */
  async say(text: string, options: SayOptions = {}): Promise<IngressEnvelope> {
    const id = options.eventId ?? `ev-${this.nextId++}`;
    const kind = options.kind ?? "channel";
    const conversationId = options.conversationId ?? (kind === "dm" ? `dm-${options.userId ?? MEMORY_USER}` : MEMORY_ROOM);
    const threadId = kind === "dm" ? undefined : (options.threadId ?? id);
    const envelope = parseEnvelope({
      id,
      channel: this.channel,
      conversation: { id: conversationId, threadId, kind },
      sender: { id: options.userId ?? MEMORY_USER, name: options.userName, isBot: false },
      mentioned: options.mentioned ?? true,
      text,
      replyTo: { channel: this.channel, conversationId, threadId },
      receivedAt: Date.now(),
      capabilities: this.capabilities,
    });
    await this.deliver(envelope);
    return envelope;
  }

  /** The platform hands the same event to the bot again (a retry after a lost ack, or a restart). */
  async redeliver(envelope: IngressEnvelope): Promise<void> {
    await this.deliver({ ...envelope, traceId: undefined });
  }

  /** A person clicks a card button; resolves with what the bot tells the clicker. */
  async click(approvalId: string, choice: ApprovalChoice, userId: string, userName?: string, isBot = false): Promise<ApprovalClickOutcome> {
    if (!this.sink) throw new Error("the memory channel is not started");
    // As on a platform, the click names the message its button is on.
    const card = this.messages.find((m) => m.card?.approvalId === approvalId);
    return this.sink.approvalClick({
      channel: this.channel, approvalId, choice, actor: { id: userId, name: userName, isBot },
      ...(card ? { messageId: card.id, conversationId: card.conversationId } : {}),
    });
  }

  /** Messages the bot posted in one conversation (optionally one thread), oldest first. */
  messagesIn(conversationId: string, threadId?: string): MemoryMessage[] {
    return this.messages.filter((m) => m.conversationId === conversationId && (threadId === undefined || m.threadId === threadId));
  }

  /** The posted cards that still wait for a click. */
  openCards(): MemoryMessage[] {
    return this.messages.filter((m) => m.card && !m.resolution);
  }

  private async deliver(envelope: IngressEnvelope): Promise<void> {
    if (!this.sink) throw new Error("the memory channel is not started");
    this.delivered.push(envelope);
    await this.sink.message(envelope);
  }

  private find(id: string): MemoryMessage | undefined {
    return this.messages.find((m) => m.id === id);
  }

  private checkLength(text: string): void {
    if (text.length > this.capabilities.maxMessageChars) {
      this.rejected.push({ length: text.length });
      throw new MessageRejectedError("too_long", `msg_too_long: ${text.length} > ${this.capabilities.maxMessageChars}`);
    }
  }

  /** Applies the injected 429s and the per-target rate, as a platform would before accepting a call. */
  private gate(target: ReplyTarget): void {
    const now = Date.now();
    if (this.failNext.count > 0) {
      this.failNext.count--;
      this.rateLimited.push({ at: now, retryAfterMs: this.failNext.retryAfterMs });
      throw new RateLimitedError(this.failNext.retryAfterMs);
    }
    if (this.platformMinGapMs !== undefined) {
      const key = targetKeyOf(target);
      const last = this.lastSendAt.get(key);
      if (last !== undefined && now - last < this.platformMinGapMs) {
        const wait = this.platformMinGapMs - (now - last);
        this.rateLimited.push({ at: now, retryAfterMs: wait });
        throw new RateLimitedError(wait);
      }
      this.lastSendAt.set(key, now);
    }
  }

  private post(target: ReplyTarget, text: string, kind: OutboundText["kind"]): SentMessage {
    this.gate(target);
    this.checkLength(text);
    const id = `m${this.nextId++}`;
    this.messages.push({ id, conversationId: target.conversationId, threadId: target.threadId, text, kind, sentAt: Date.now() });
    return { id };
  }
}

function seen(m: MemoryMessage): SeenMessage {
  const buttons = m.card && !m.resolution
    ? ([["Approve", m.card.buttons.approve], ["Always", m.card.buttons.always], ["Deny", m.card.buttons.deny]] as const).map(
        ([label, payload]) => ({ label, payload }),
      )
    : [];
  return { id: m.id, text: m.text, buttons, conversationId: m.conversationId, threadId: m.threadId };
}

/** The memory channel as a contract harness. */
export function createMemoryHarness(options: MemoryChannelOptions = {}): ChannelHarness & { channel: MemoryChannel } {
  const channel = new MemoryChannel(options);
  let last: IngressEnvelope | undefined;
  return {
    adapter: channel,
    channel,
    async userSays(text, o: UserMessageOptions = {}) {
      last = await channel.say(text, {
        userId: o.userId, userName: o.userName, threadId: o.threadId, kind: o.dm ? "dm" : "channel", mentioned: o.dm ? true : (o.mention ?? true),
      });
      return { messageId: last.id, conversationId: last.conversation.id, threadId: last.conversation.threadId };
    },
    async botMessages(conversationId, threadId) {
      return channel.messagesIn(conversationId, threadId).map(seen);
    },
    async click(_message, payload, userId) {
      const decoded = decodeApprovalPayload(payload);
      if (!decoded) return { shownToClicker: "This button is not one of ours." };
      const outcome = await channel.click(decoded.approvalId, decoded.choice, userId);
      return outcome.status === "accepted" ? {} : { shownToClicker: outcome.message };
    },
    async redeliverLast() {
      if (!last) throw new Error("nothing was said yet");
      await channel.redeliver(last);
    },
    async close() {
      await channel.stop();
    },
  };
}
