/** Builds the Discord adapter from the config's `discord` section. */
import { ChannelSetupError, type ChannelAdapter, type ChannelSetup } from "../../src/ports.ts";
import { createDiscordAdapter } from "./index.ts";

/** The keys of the config's `discord` section this adapter reads. */
export interface DiscordSettings {
  token?: string;
  apiUrl?: string;
  allowedGuilds?: string[];
  allowedChannels?: string[];
  registerSlashCommands?: boolean;
  access?: { mentionGate: boolean };
}

/** The Discord adapter for these settings; throws ChannelSetupError when the token is missing. */
export function discordFromConfig(setup: ChannelSetup<DiscordSettings>): ChannelAdapter {
  const d = setup.settings;
  if (!d.token) throw new ChannelSetupError(["DISCORD_TOKEN: required for the Discord channel (Developer Portal → Bot → Reset Token)"]);
  return createDiscordAdapter({
    token: d.token, apiUrl: d.apiUrl, allowedGuilds: d.allowedGuilds, allowedChannels: d.allowedChannels,
    registerSlashCommands: d.registerSlashCommands, mentionGate: d.access?.mentionGate, log: setup.log,
  });
}
