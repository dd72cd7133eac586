/**
 * The Discord ChannelHarness: the real adapter (discord.js inside) against the local Discord
 * emulator. Users act through the emulator's gateway exactly as Discord would deliver them.
 */
import type { ChannelHarness, PostedUserMessage, SeenMessage, UserMessageOptions } from "../contract/harness.ts";
import { createDiscordAdapter, type DiscordAdapterOptions } from "../../adapters/discord/index.ts";
import { startDiscordEmulator, type DiscordEmulator, type DiscordEmulatorOptions, type EmuMessage } from "../emulators/discord/index.ts";

/** The harness plus the emulator underneath, for tests that need more than the contract. */
export interface DiscordHarness extends ChannelHarness {
  emulator: DiscordEmulator;
}

const DEFAULT_USER = "200000000000000001";

function flatten(message: EmuMessage): SeenMessage["buttons"] {
  const rows = message.components as Array<{ components?: Array<{ label?: string; custom_id?: string }> }>;
  return rows.flatMap((row) => row.components ?? []).filter((b) => b.custom_id).map((b) => ({ label: b.label ?? "", payload: b.custom_id! }));
}

/** Starts an emulator and builds the adapter against it (not started). */
export async function createDiscordHarness(
  adapterOptions: Partial<DiscordAdapterOptions> = {},
  emulatorOptions: DiscordEmulatorOptions = {},
): Promise<DiscordHarness> {
  const emulator = await startDiscordEmulator(emulatorOptions);
  const adapter = createDiscordAdapter({ token: emulator.token, apiUrl: emulator.apiUrl, ...adapterOptions });
  const { state } = emulator;

  /** The conversation (parent channel) and thread a channel id stands for. */
  function placeOf(channelId: string): { conversationId: string; threadId?: string } {
    const channel = state.channels.get(channelId);
    return channel?.parent_id ? { conversationId: channel.parent_id, threadId: channel.id } : { conversationId: channelId };
  }

  return {
    adapter,
    emulator,

    async userSays(text: string, options: UserMessageOptions = {}): Promise<PostedUserMessage> {
      const userId = options.userId ?? DEFAULT_USER;
      const mention = options.mention ?? !options.dm;
      const content = mention ? `<@${emulator.bot.id}> ${text}` : text;
      const channelId = options.dm ? emulator.dmChannel(userId) : (options.threadId ?? emulator.textChannelId);
      const posted = await emulator.userPosts({ channelId, userId, userName: options.userName, content });
      if (options.dm) return { messageId: posted.id, conversationId: channelId };
      if (options.threadId) return { messageId: posted.id, ...placeOf(options.threadId) };
      // The bot answers a server mention in a thread started on the message, which takes its id.
      return { messageId: posted.id, conversationId: channelId, threadId: posted.id };
    },

    async botMessages(conversationId: string, threadId?: string): Promise<SeenMessage[]> {
      return emulator
        .messages(threadId ?? conversationId)
        .filter((m) => m.author.id === emulator.bot.id)
        .map((m) => ({ id: m.id, text: m.content, buttons: flatten(m), ...placeOf(m.channel_id) }));
    },

    async click(message: SeenMessage, payload: string, userId: string): Promise<{ shownToClicker?: string }> {
      const interaction = await emulator.click({ channelId: message.threadId ?? message.conversationId, messageId: message.id, customId: payload, userId });
      await emulator.interactionSettled(interaction);
      const shown = interaction.responses.filter((r) => r.ephemeral && r.content).map((r) => r.content!);
      return shown.length ? { shownToClicker: shown.join("\n") } : {};
    },

    async redeliverLast(): Promise<void> {
      await emulator.redeliverLast();
    },

    async close(): Promise<void> {
      await adapter.stop();
      await emulator.close();
    },
  };
}
