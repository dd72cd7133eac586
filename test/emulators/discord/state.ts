/**
 * The Discord emulator's world: one guild with a text channel and the bot's managed role, users,
 * DM channels, threads, messages, pending interactions and the record of every API call the bot made.
 * The REST and gateway halves both read and change this one state.
 */
import { EVERYONE_PERMISSIONS, GuildRoles } from "./roles.ts";
import type { EmuModal, ModalBody } from "./modals.ts";

/** A Discord user as the API shows it. */
export interface EmuUser {
  id: string;
  username: string;
  global_name: string | null;
  discriminator: string;
  avatar: null;
  bot?: boolean;
}

/** Channel types the emulator knows: guild text, DM, public thread. */
export const ChannelType = { GuildText: 0, DM: 1, PublicThread: 11 } as const;

export interface EmuChannel {
  id: string;
  type: number;
  name?: string;
  guild_id?: string;
  parent_id?: string;
  owner_id?: string;
  recipients?: EmuUser[];
}

export interface EmuMessage {
  id: string;
  channel_id: string;
  author: EmuUser;
  content: string;
  components: unknown[];
  flags: number;
  type: number;
  timestamp: string;
  edited_timestamp: string | null;
  message_reference?: { message_id: string; channel_id: string; guild_id?: string };
  webhook_id?: string;
  application_id?: string;
  /** Set for ephemeral interaction replies: the only user who can see the message. */
  ephemeralFor?: string;
  /** The interaction this message answered, for ephemeral and follow-up messages. */
  interactionId?: string;
}

/** A response the bot gave to an interaction, through the callback or a follow-up. */
export interface InteractionResponse {
  kind: "callback" | "followup" | "edit-original";
  type?: number;
  content?: string;
  ephemeral: boolean;
  /** For a type 9 callback: the modal shown. */
  modal?: ModalBody;
  at: number;
}

export interface EmuInteraction {
  id: string;
  token: string;
  type: number;
  createdAt: number;
  user: EmuUser;
  channelId: string;
  messageId?: string;
  customId?: string;
  /** The custom_id was not on the message: a crafted or stale click. */
  forged: boolean;
  acknowledged: boolean;
  responses: InteractionResponse[];
}

/** One HTTP request the bot made, as the emulator answered it. */
export interface ApiCall {
  method: string;
  path: string;
  /** The route name the emulator matched (e.g. "createMessage"), or "unknown". */
  route: string;
  body: unknown;
  status: number;
  at: number;
}

/** A fault the next matching request receives instead of its normal answer. */
export interface Fault {
  status: number;
  /** Seconds, as Discord's Retry-After header says it (429 only). */
  retryAfter?: number;
  global?: boolean;
  code?: number;
  message?: string;
}

const DISCORD_EPOCH = 1420070400000n;

/** Holds everything the emulated platform knows. */
export class DiscordState {
  readonly token: string;
  readonly applicationId: string;
  readonly bot: EmuUser;
  readonly guildId: string;
  readonly textChannelId: string;
  /** The role Discord creates for a bot when it joins a server (managed, tagged with the bot's id). */
  readonly botRoleId: string;
  readonly channels = new Map<string, EmuChannel>();
  readonly messages = new Map<string, EmuMessage[]>();
  readonly users = new Map<string, EmuUser>();
  readonly interactions = new Map<string, EmuInteraction>();
  /** Modals shown to people (open until submitted), oldest first. */
  readonly modals: EmuModal[] = [];
  readonly calls: ApiCall[] = [];
  readonly faults = new Map<string, Fault[]>();
  /** Application commands the bot registered, by scope ("global" or a guild id). */
  readonly commands = new Map<string, unknown[]>();
  /** Roles tests create, and which members hold them. */
  readonly guildRoles = new GuildRoles(() => this.snowflake());
  /** The route bucket of message edits in one channel: this many per window (Discord: about 5 per 5 s). */
  editBucket = { limit: 5, windowMs: 5000 };
  private readonly editTimes = new Map<string, number[]>();
  private counter = 0n;

  constructor(token: string) {
    this.token = token;
    this.applicationId = this.snowflake();
    this.bot = { id: this.applicationId, username: "gatehouse", global_name: null, discriminator: "0", avatar: null, bot: true };
    this.users.set(this.bot.id, this.bot);
    this.guildId = this.snowflake();
    this.textChannelId = this.snowflake();
    this.channels.set(this.textChannelId, { id: this.textChannelId, type: ChannelType.GuildText, name: "general", guild_id: this.guildId });
    this.botRoleId = this.snowflake();
  }

  /** A new, increasing Discord snowflake (timestamp in the top bits, as the real ones). */
  snowflake(): string {
    this.counter += 1n;
    return (((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | (this.counter & 0x3fffffn)).toString();
  }

  /** The user with this id, created on first use (people are made up freely in tests). */
  user(id: string, name?: string, bot = false): EmuUser {
    let u = this.users.get(id);
    if (!u) {
      u = { id, username: name ?? `user${id.slice(-4)}`, global_name: name ?? null, discriminator: "0", avatar: null, ...(bot ? { bot: true } : {}) };
      this.users.set(id, u);
    }
    return u;
  }

  /** The DM channel between the bot and `userId`, opened on first use. */
  dmChannel(userId: string): EmuChannel {
    for (const c of this.channels.values()) {
      if (c.type === ChannelType.DM && c.recipients?.[0]?.id === userId) return c;
    }
    const channel: EmuChannel = { id: this.snowflake(), type: ChannelType.DM, recipients: [this.user(userId)] };
    this.channels.set(channel.id, channel);
    return channel;
  }

  messagesIn(channelId: string): EmuMessage[] {
    let list = this.messages.get(channelId);
    if (!list) {
      list = [];
      this.messages.set(channelId, list);
    }
    return list;
  }

  findMessage(channelId: string, messageId: string): EmuMessage | undefined {
    return this.messages.get(channelId)?.find((m) => m.id === messageId);
  }

  /** Appends a message to a channel. */
  addMessage(input: Omit<EmuMessage, "id" | "timestamp" | "edited_timestamp" | "flags" | "type" | "components"> & Partial<EmuMessage>): EmuMessage {
    const message: EmuMessage = {
      id: this.snowflake(),
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      flags: 0,
      type: input.message_reference ? 19 : 0,
      components: [],
      ...input,
    };
    this.messagesIn(message.channel_id).push(message);
    return message;
  }

  /**
   * Counts an edit of a message in `channelId` against its route bucket; returns the seconds to
   * wait when the bucket is empty (the edit is then refused and not counted).
   */
  takeEditSlot(channelId: string, now = Date.now()): number | undefined {
    const times = (this.editTimes.get(channelId) ?? []).filter((t) => now - t < this.editBucket.windowMs);
    this.editTimes.set(channelId, times);
    if (times.length >= this.editBucket.limit) return Math.max(0.001, (times[0]! + this.editBucket.windowMs - now) / 1000);
    times.push(now);
    return undefined;
  }

  /** Takes the fault queued for `route`, if any. */
  takeFault(route: string): Fault | undefined {
    const queue = this.faults.get(route);
    return queue?.shift();
  }

  /** Users mentioned in a text (`<@id>` / `<@!id>`), as Discord lists them in `mentions`. */
  mentionsIn(content: string): EmuUser[] {
    const ids = new Set([...content.matchAll(/<@!?(\d+)>/g)].map((m) => m[1]!));
    return [...ids].map((id) => this.users.get(id)).filter((u): u is EmuUser => Boolean(u));
  }

  /** Roles mentioned in a guild message (`<@&id>`), as Discord lists them in `mention_roles`: only the server's roles. */
  roleMentionsIn(content: string): string[] {
    const known = new Set(this.rolesJson().map((r) => r.id));
    return [...new Set([...content.matchAll(/<@&(\d+)>/g)].map((m) => m[1]!))].filter((id) => known.has(id) && id !== this.guildId);
  }

  /** The roles `userId` holds in the server, as `member.roles` lists them (the bot: its managed role too). */
  memberRoles(userId: string): string[] {
    return [...(userId === this.bot.id ? [this.botRoleId] : []), ...this.guildRoles.of(userId)];
  }

  /** The server's roles: @everyone (its id is the guild's), the bot's managed role, and the roles tests created. */
  rolesJson(): Array<Record<string, unknown> & { id: string }> {
    const role = { color: 0, hoist: false, icon: null, unicode_emoji: null, mentionable: false, flags: 0 };
    return [
      { ...role, id: this.guildId, name: "@everyone", permissions: String(EVERYONE_PERMISSIONS), position: 0, managed: false },
      { ...role, id: this.botRoleId, name: this.bot.username, permissions: "277025508352", position: 1, managed: true, tags: { bot_id: this.bot.id } },
      ...[...this.guildRoles.roles.values()].map((r) => this.guildRoles.json(r)),
    ];
  }

  /** The message as the API and the gateway show it. */
  messageJson(message: EmuMessage): Record<string, unknown> {
    const channel = this.channels.get(message.channel_id);
    const ref = message.message_reference;
    const referenced = ref ? this.findMessage(ref.channel_id, ref.message_id) : undefined;
    return {
      id: message.id,
      type: message.type,
      channel_id: message.channel_id,
      ...(channel?.guild_id ? { guild_id: channel.guild_id } : {}),
      author: message.author,
      ...(channel?.guild_id && !message.webhook_id
        ? { member: { roles: this.memberRoles(message.author.id), joined_at: new Date(0).toISOString(), deaf: false, mute: false, flags: 0 } }
        : {}),
      content: message.content,
      timestamp: message.timestamp,
      edited_timestamp: message.edited_timestamp,
      tts: false,
      mention_everyone: false,
      mentions: this.mentionsIn(message.content),
      mention_roles: channel?.guild_id ? this.roleMentionsIn(message.content) : [],
      attachments: [],
      embeds: [],
      pinned: false,
      flags: message.flags,
      components: message.components,
      ...(ref ? { message_reference: { type: 0, ...ref } } : {}),
      ...(referenced ? { referenced_message: { ...this.messageJson({ ...referenced, message_reference: undefined }) } } : {}),
      ...(message.webhook_id ? { webhook_id: message.webhook_id } : {}),
      ...(message.application_id ? { application_id: message.application_id } : {}),
    };
  }

  /** The channel as the API and the gateway show it. */
  channelJson(channel: EmuChannel): Record<string, unknown> {
    const base: Record<string, unknown> = { id: channel.id, type: channel.type, flags: 0 };
    if (channel.type === ChannelType.DM) return { ...base, recipients: channel.recipients, last_message_id: null };
    const guildPart = { ...base, name: channel.name, guild_id: channel.guild_id, position: 0, permission_overwrites: [], rate_limit_per_user: 0, nsfw: false };
    if (channel.type !== ChannelType.PublicThread) return { ...guildPart, parent_id: null, topic: null, last_message_id: null };
    return {
      ...guildPart,
      parent_id: channel.parent_id,
      owner_id: channel.owner_id,
      message_count: this.messages.get(channel.id)?.length ?? 0,
      member_count: 1,
      total_message_sent: 0,
      thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date().toISOString(), locked: false },
    };
  }

  /** The guild as GUILD_CREATE shows it: the text channel, active threads, the roles, and the bot as a member with its role. */
  guildJson(): Record<string, unknown> {
    const channels = [...this.channels.values()];
    return {
      id: this.guildId,
      name: "Gatehouse test server",
      icon: null,
      owner_id: this.snowflake(),
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      nsfw_level: 0,
      premium_tier: 0,
      preferred_locale: "en-US",
      system_channel_id: null,
      features: [],
      roles: this.rolesJson(),
      emojis: [],
      stickers: [],
      joined_at: new Date().toISOString(),
      large: false,
      unavailable: false,
      member_count: 2,
      members: [
        {
          user: this.bot, nick: null, avatar: null, roles: [this.botRoleId], joined_at: new Date(0).toISOString(), premium_since: null,
          deaf: false, mute: false, flags: 0, pending: false, communication_disabled_until: null,
        },
      ],
      presences: [],
      voice_states: [],
      stage_instances: [],
      guild_scheduled_events: [],
      channels: channels.filter((c) => c.type === ChannelType.GuildText).map((c) => this.channelJson(c)),
      threads: channels.filter((c) => c.type === ChannelType.PublicThread).map((c) => this.channelJson(c)),
    };
  }
}
