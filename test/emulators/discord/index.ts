/**
 * A local Discord for tests: REST (/api/v10) and gateway (WebSocket) on 127.0.0.1, which the
 * real discord.js Client logs in to with `rest: { api: emulator.apiUrl }`. Tests act as users
 * through it (post, click) and read back what the bot did.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { DiscordGateway, type GatewayOptions } from "./gateway.ts";
import { handleRest } from "./rest.ts";
import { ChannelType, DiscordState, type EmuInteraction, type EmuMessage, type Fault } from "./state.ts";
import { ADMINISTRATOR } from "./roles.ts";
import { modalSubmitData, type EmuModal } from "./modals.ts";

export type { ApiCall, EmuInteraction, EmuMessage, Fault } from "./state.ts";
export type { EmuModal } from "./modals.ts";
export { ApplicationFlags } from "./application.ts";

export interface DiscordEmulatorOptions {
  /** The bot token the emulator accepts (default "emulator-bot-token"). */
  token?: string;
  /**
   * The Message Content intent is switched on for the app (default true): `GET /applications/@me`
   * shows it in `flags`; false → no such flag, and close code 4014 when the bot requests the intent.
   */
  messageContentIntent?: boolean;
  /** How long an interaction may wait for its first response (default 3,000 ms, as Discord). */
  ackDeadlineMs?: number;
  heartbeatIntervalMs?: number;
  /** Message edits one channel's route bucket takes (default 5 per 5,000 ms). */
  editBucket?: { limit: number; windowMs: number };
}

/** Routes that accept injected faults (names as recorded in `calls[].route`). */
export type DiscordRouteName =
  | "getGatewayBot" | "getCurrentUser" | "getCurrentApplication" | "getChannel" | "createMessage" | "getMessage" | "editMessage" | "startThread"
  | "typing" | "interactionCallback" | "webhookExecute" | "webhookEditOriginal" | "putCommands" | "getGuildRoles" | "getGuildMember";

export interface UserPostOptions {
  channelId: string;
  userId: string;
  userName?: string;
  content: string;
  bot?: boolean;
  /** Reply to this message (same channel). */
  replyTo?: string;
  /**
   * Roles mentioned before the content, as `<@&id> ` (e.g. the bot's managed role, which Discord's
   * client often inserts when someone types @Bot); listed in `mention_roles` as Discord sends it.
   */
  mentionRoles?: string[];
}

export interface ClickOptions {
  channelId: string;
  messageId: string;
  customId: string;
  userId: string;
  userName?: string;
}

export interface SlashCommandOptions {
  channelId: string;
  userId: string;
  name: string;
}

export type DiscordEmulator = Awaited<ReturnType<typeof startDiscordEmulator>>;

/** Starts the emulator on an ephemeral port. */
export async function startDiscordEmulator(options: DiscordEmulatorOptions = {}) {
  const state = new DiscordState(options.token ?? "emulator-bot-token");
  if (options.editBucket) state.editBucket = options.editBucket;
  // One settings object for the gateway and the REST API, so the intent's flag and the 4014 always agree.
  const settings: GatewayOptions = {
    messageContentIntent: options.messageContentIntent ?? true,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
  };
  const gateway = new DiscordGateway(state, settings);
  const dispatch = (event: string, data: Record<string, unknown>) => gateway.dispatch(event, data);
  const restContext = {
    state, dispatch: (e: string, d: Record<string, unknown>) => void dispatch(e, d), gatewayUrl: () => gateway.url,
    ackDeadlineMs: options.ackDeadlineMs ?? 3000, application: settings,
  };
  const server = createServer((req, res) => {
    handleRest(restContext, req, res).catch(() => {
      res.writeHead(500);
      res.end();
    });
  });
  server.on("upgrade", (req, socket, head) => {
    if ((req.url ?? "").startsWith("/gateway")) gateway.upgrade(req, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  gateway.url = `ws://127.0.0.1:${port}/gateway`;
  let lastUserMessage: EmuMessage | undefined;

  function interactionBase(type: number, channelId: string, userId: string, userName?: string) {
    const channel = state.channels.get(channelId);
    if (!channel) throw new Error(`no channel ${channelId} in the emulator`);
    const user = state.user(userId, userName);
    const interaction: EmuInteraction = {
      id: state.snowflake(), token: `itk_${state.snowflake()}`, type, createdAt: Date.now(), user, channelId,
      forged: false, acknowledged: false, responses: [],
    };
    const payload: Record<string, unknown> = {
      id: interaction.id, application_id: state.applicationId, type, token: interaction.token, version: 1,
      channel: state.channelJson(channel), channel_id: channelId, app_permissions: "1071698660929", locale: "en-US",
      entitlements: [], authorizing_integration_owners: { "0": state.guildId }, attachment_size_limit: 10_485_760,
      ...(channel.guild_id
        ? { guild_id: channel.guild_id, guild_locale: "en-US", context: 0, member: { user, roles: state.memberRoles(userId), joined_at: new Date(0).toISOString(), deaf: false, mute: false, flags: 0, permissions: state.guildRoles.permissionsOf(userId) } }
        : { user, context: 1 }),
    };
    return { interaction, payload };
  }

  return {
    /** Pass as discord.js `rest.api` (DISCORD_API_URL). */
    apiUrl: `${origin}/api`,
    gatewayUrl: gateway.url,
    token: state.token,
    bot: state.bot,
    applicationId: state.applicationId,
    guildId: state.guildId,
    /** The server's text channel, where users mention the bot. */
    textChannelId: state.textChannelId,
    /** The bot's managed role in the server (a role mention of it addresses the bot). */
    botRoleId: state.botRoleId,
    /** Every REST call the bot made, oldest first. */
    calls: state.calls,
    state,
    gateway,

    /** Switches the Message Content intent on or off, as in the Developer Portal (flags and gateway both follow). */
    setMessageContentIntent(enabled: boolean): void {
      settings.messageContentIntent = enabled;
    },

    /** The next `count` requests to `route` fail with `fault` (e.g. `{ status: 429, retryAfter: 1 }`). */
    failNext(route: DiscordRouteName, fault: Fault, count = 1): void {
      const queue = state.faults.get(route) ?? [];
      for (let i = 0; i < count; i++) queue.push(fault);
      state.faults.set(route, queue);
    },

    /**
     * Creates a server role (with the Administrator permission when `administrator`), announced to
     * the bot with GUILD_ROLE_CREATE as Discord does; resolves with its id.
     */
    async createRole(name: string, options: { administrator?: boolean; permissions?: bigint } = {}): Promise<string> {
      const role = state.guildRoles.create(name, (options.permissions ?? 0n) | (options.administrator ? ADMINISTRATOR : 0n));
      await dispatch("GUILD_ROLE_CREATE", { guild_id: state.guildId, role: state.guildRoles.json(role) });
      return role.id;
    },

    /**
     * Gives a member a role, or takes it away. Discord tells a bot without the Server Members intent
     * nothing of it: the bot sees it in the next member it fetches, message or interaction.
     */
    setMemberRole(userId: string, roleId: string, held = true): void {
      state.user(userId);
      if (held) state.guildRoles.assign(userId, roleId);
      else state.guildRoles.unassign(userId, roleId);
    },

    /** A user (or another bot) posts; resolves once the gateway has carried the event to the bot. */
    async userPosts(post: UserPostOptions): Promise<EmuMessage> {
      if (!state.channels.has(post.channelId)) throw new Error(`no channel ${post.channelId} in the emulator`);
      const author = state.user(post.userId, post.userName, post.bot);
      const message = state.addMessage({
        channel_id: post.channelId,
        author,
        content: [...(post.mentionRoles ?? []).map((id) => `<@&${id}>`), post.content].join(" "),
        ...(post.replyTo ? { message_reference: { message_id: post.replyTo, channel_id: post.channelId } } : {}),
      });
      if (!post.bot) lastUserMessage = message;
      await dispatch("MESSAGE_CREATE", state.messageJson(message));
      return message;
    },

    /** Delivers the last user message event again, with a new sequence number (a redelivery). */
    async redeliverLast(): Promise<void> {
      if (!lastUserMessage) throw new Error("no user message to redeliver");
      await dispatch("MESSAGE_CREATE", state.messageJson(lastUserMessage));
    },

    /** The DM channel between the bot and a user. */
    dmChannel(userId: string): string {
      return state.dmChannel(userId).id;
    },

    /** A user starts a thread of their own in the text channel. */
    async userStartsThread(userId: string, name = "a thread"): Promise<string> {
      const thread = { id: state.snowflake(), type: ChannelType.PublicThread, name, guild_id: state.guildId, parent_id: state.textChannelId, owner_id: state.user(userId).id };
      state.channels.set(thread.id, thread);
      await dispatch("THREAD_CREATE", { ...state.channelJson(thread), newly_created: true });
      return thread.id;
    },

    /**
     * A user clicks a button. A custom_id that is not on the message is still sent (as a crafted
     * or stale client would) and marked `forged`.
     */
    async click(click: ClickOptions): Promise<EmuInteraction> {
      const message = state.findMessage(click.channelId, click.messageId);
      if (!message) throw new Error(`no message ${click.messageId} in channel ${click.channelId}`);
      const { interaction, payload } = interactionBase(3, click.channelId, click.userId, click.userName);
      interaction.messageId = message.id;
      interaction.customId = click.customId;
      interaction.forged = !JSON.stringify(message.components).includes(JSON.stringify(click.customId));
      state.interactions.set(interaction.id, interaction);
      await dispatch("INTERACTION_CREATE", { ...payload, message: state.messageJson(message), data: { custom_id: click.customId, component_type: 2 } });
      return interaction;
    },

    /** The modals `userId` has open now, oldest first. */
    openModals(userId: string): EmuModal[] {
      return state.modals.filter((m) => m.userId === userId && m.open);
    },

    /**
     * The person a modal is shown to submits it with `values` (text input custom_id → text): a
     * MODAL_SUBMIT interaction, carrying the message whose button opened the modal. Throws where
     * Discord's client would not submit (the modal is closed, a required input empty, too long).
     */
    async submitModal(modal: EmuModal, values: Record<string, string>): Promise<EmuInteraction> {
      const data = modalSubmitData(modal, values);
      modal.open = false;
      const { interaction, payload } = interactionBase(5, modal.channelId, modal.userId);
      interaction.customId = modal.body.custom_id;
      const message = modal.messageId ? state.findMessage(modal.channelId, modal.messageId) : undefined;
      if (message) interaction.messageId = message.id;
      state.interactions.set(interaction.id, interaction);
      await dispatch("INTERACTION_CREATE", { ...payload, ...(message ? { message: state.messageJson(message) } : {}), data });
      return interaction;
    },

    /** A user runs a registered slash command (no options). */
    async slashCommand(command: SlashCommandOptions): Promise<EmuInteraction> {
      const registered = [...state.commands.values()].flat() as Array<{ id: string; name: string }>;
      const found = registered.find((c) => c.name === command.name);
      if (!found) throw new Error(`/${command.name} is not registered`);
      const { interaction, payload } = interactionBase(2, command.channelId, command.userId);
      state.interactions.set(interaction.id, interaction);
      await dispatch("INTERACTION_CREATE", { ...payload, data: { id: found.id, name: found.name, type: 1 } });
      return interaction;
    },

    /** Resolves when the interaction has its first response, and `settleMs` more have passed. */
    async interactionSettled(interaction: EmuInteraction, timeoutMs = 4000, settleMs = 100): Promise<EmuInteraction> {
      const deadline = Date.now() + timeoutMs;
      while (!interaction.acknowledged && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, settleMs));
      return interaction;
    },

    /** Messages in a channel, oldest first, as everyone sees them (ephemeral ones left out). */
    messages(channelId: string): EmuMessage[] {
      return state.messagesIn(channelId).filter((m) => !m.ephemeralFor);
    },

    /** Drops the gateway connection abruptly; discord.js should RESUME. */
    dropGateway(): void {
      gateway.dropConnections();
    },

    async close(): Promise<void> {
      gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
