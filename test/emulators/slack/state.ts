/**
 * The Slack emulator's world: the workspace (bot, users and its admins, user groups, channels),
 * every message as a person would see it, ephemeral messages, assistant thread statuses, the record
 * of Web API calls, the chat.update rate limit, injected faults and ack timings. The HTTP and Socket Mode parts read
 * and write it; tests read it.
 */
import { MANIFEST_BOT_SCOPES } from "./scopes.ts";
import { UserGroups } from "./usergroups.ts";
import { Views } from "./views.ts";

/** A message in a channel, as currently shown (after chat.update). */
export interface EmulatedMessage {
  channel: string;
  ts: string;
  /** Set for replies: the ts of the thread's parent. */
  threadTs?: string;
  user?: string;
  botId?: string;
  text: string;
  blocks?: unknown[];
  edited?: boolean;
}

/** A message shown only to one user (chat.postEphemeral or a response_url reply). */
export interface EmulatedEphemeral {
  channel: string;
  user: string;
  threadTs?: string;
  text: string;
  via: "chat.postEphemeral" | "response_url";
  at: number;
}

/** One Web API call the bot made. */
export interface RecordedCall {
  method: string;
  args: Record<string, unknown>;
  /** The token the call was made with (Bearer header or `token` field). */
  token?: string;
  at: number;
  /** What the emulator answered: "ok" or the error code / HTTP status. */
  result: string;
}

/** How long the bot took to ack one delivered envelope (Socket Mode) or event POST (HTTP). */
export interface AckTiming {
  envelopeId: string;
  kind: "events_api" | "interactive" | "slash_commands";
  sentAt: number;
  ackedAt?: number;
  ms?: number;
  ackPayload?: unknown;
}

/** An error the next call of `method` answers with, instead of running. */
export interface Fault {
  status?: number;
  retryAfter?: number;
  error?: string;
}

export interface EmulatedUser {
  id: string;
  name: string;
  realName?: string;
  isBot?: boolean;
  /** A workspace admin (users.info `is_admin`). */
  isAdmin?: boolean;
  /** A workspace owner (users.info `is_owner`; owners are admins too). */
  isOwner?: boolean;
}

export interface WorkspaceOptions {
  teamId?: string;
  botToken?: string;
  appToken?: string;
  botUserId?: string;
  botId?: string;
  appId?: string;
  users?: EmulatedUser[];
  /** Channel ids besides the defaults (`C0GENERAL`, and one DM per user: `D<userId>`). */
  channels?: string[];
  /**
   * Public channels the bot has not joined: people post and run commands there, and the bot's own
   * chat.postMessage is refused with `not_in_channel` (an id in neither list is a conversation the
   * bot cannot see at all, such as a DM between two people: `channel_not_found`).
   */
  channelsWithoutBot?: string[];
  /** Bot scopes the app was granted (default: every bot scope in adapters/slack/manifest.json). */
  scopes?: string[];
  /** chat.update calls the workspace accepts in any minute before answering 429 (default 50: Tier 3). */
  updatesPerMinute?: number;
}

/** The emulator's mutable state. */
export class SlackWorld {
  readonly teamId: string;
  readonly botToken: string;
  readonly appToken: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly appId: string;
  /** Bot scopes granted to the app; a test may change them while the emulator runs. */
  scopes: string[];
  readonly users = new Map<string, EmulatedUser>();
  readonly channels = new Set<string>();
  readonly channelsWithoutBot = new Set<string>();
  readonly messages: EmulatedMessage[] = [];
  readonly ephemerals: EmulatedEphemeral[] = [];
  readonly calls: RecordedCall[] = [];
  readonly acks: AckTiming[] = [];
  readonly faults = new Map<string, Fault[]>();
  /** What each assistant thread shows as the app's status ("channel:thread_ts" → status); cleared when the app posts there. */
  readonly threadStatuses = new Map<string, string>();
  /** The workspace's user groups and their members. */
  readonly userGroups: UserGroups;
  /** Trigger ids handed out with interactions, and the modals opened with them. */
  readonly views = new Views();
  readonly updatesPerMinute: number;
  private updateTimes: number[] = [];
  private lastTs = 0;
  private waiters = new Set<() => void>();

  constructor(options: WorkspaceOptions = {}) {
    this.teamId = options.teamId ?? "T0TEAM";
    this.botToken = options.botToken ?? "xoxb-emulator-bot-token";
    this.appToken = options.appToken ?? "xapp-1-emulator-app-token";
    this.botUserId = options.botUserId ?? "U0BOT";
    this.botId = options.botId ?? "B0BOT";
    this.appId = options.appId ?? "A0APP";
    this.scopes = [...(options.scopes ?? MANIFEST_BOT_SCOPES)];
    this.updatesPerMinute = options.updatesPerMinute ?? 50;
    this.userGroups = new UserGroups(this.teamId);
    const users = options.users ?? [
      { id: "U0ALICE", name: "alice", realName: "Alice Example" },
      { id: "U0BOB", name: "bob", realName: "Bob Example" },
      { id: "U0OTHERBOT", name: "otherbot", isBot: true },
    ];
    this.users.set(this.botUserId, { id: this.botUserId, name: "gatehouse", isBot: true });
    for (const u of users) {
      this.users.set(u.id, u);
      this.channels.add(`D${u.id}`);
    }
    this.channels.add("C0GENERAL");
    for (const c of options.channels ?? []) this.channels.add(c);
    for (const c of options.channelsWithoutBot ?? []) this.channelsWithoutBot.add(c);
  }

  /** A fresh, strictly increasing Slack timestamp ("1712345678.000100"). */
  nextTs(): string {
    const now = Date.now() * 1000;
    this.lastTs = Math.max(now, this.lastTs + 1);
    const secs = Math.floor(this.lastTs / 1_000_000);
    const micros = String(this.lastTs % 1_000_000).padStart(6, "0");
    return `${secs}.${micros}`;
  }

  /** Adds a message and wakes anyone waiting for a change. */
  addMessage(message: EmulatedMessage): EmulatedMessage {
    this.messages.push(message);
    this.changed();
    return message;
  }

  /** The status an assistant thread shows now ("" when none). */
  threadStatus(channel: string, threadTs: string): string {
    return this.threadStatuses.get(`${channel}:${threadTs}`) ?? "";
  }

  /**
   * Counts a chat.update against the workspace's minute; returns the seconds to wait when it is over
   * the limit (the call is then refused and not counted).
   */
  takeUpdateSlot(now = Date.now()): number | undefined {
    this.updateTimes = this.updateTimes.filter((t) => now - t < 60_000);
    if (this.updateTimes.length >= this.updatesPerMinute) return Math.max(1, Math.ceil((this.updateTimes[0]! + 60_000 - now) / 1000));
    this.updateTimes.push(now);
    return undefined;
  }

  /** Makes a user a workspace admin or owner (or neither again), as users.info then reports. */
  setAdmin(userId: string, role: { admin?: boolean; owner?: boolean }): void {
    const user = this.users.get(userId);
    if (!user) throw new Error(`no user ${userId} in the workspace`);
    user.isOwner = role.owner ?? false;
    user.isAdmin = (role.admin ?? false) || user.isOwner;
  }

  findMessage(channel: string, ts: string): EmulatedMessage | undefined {
    return this.messages.find((m) => m.channel === channel && m.ts === ts);
  }

  /** Queues a fault for the next call of `method`. */
  failNext(method: string, fault: Fault): void {
    const list = this.faults.get(method) ?? [];
    list.push(fault);
    this.faults.set(method, list);
  }

  takeFault(method: string): Fault | undefined {
    const list = this.faults.get(method);
    return list?.shift();
  }

  /** Signals that something a waiter may care about happened. */
  changed(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves once `check` returns a value (re-checked on every change), or undefined after `timeoutMs`. */
  waitFor<T>(check: () => T | undefined, timeoutMs = 2000): Promise<T | undefined> {
    const first = check();
    if (first !== undefined) return Promise.resolve(first);
    return new Promise((resolve) => {
      const done = (value: T | undefined) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(value);
      };
      const wake = () => {
        const value = check();
        if (value !== undefined) done(value);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      this.waiters.add(wake);
    });
  }
}
