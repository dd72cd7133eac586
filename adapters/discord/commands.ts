/**
 * The bot's slash commands (/stop, /status, /new, /compact, /always, /help) and their registration. A slash command
 * reaches the gateway as a message whose text is the command, like the typed form.
 */
import { Routes, type REST } from "discord.js";

/** The commands registered when `registerSlashCommands` is on. */
export const SLASH_COMMANDS = [
  { name: "stop", description: "Stop what the bot is doing in this thread", type: 1 },
  { name: "status", description: "Show what the bot is doing in this thread", type: 1 },
  { name: "new", description: "Start a fresh conversation in this thread", type: 1 },
  { name: "compact", description: "Summarize the earlier conversation of this thread to make room", type: 1 },
  { name: "always", description: "List and revoke what runs here without asking", type: 1 },
  { name: "help", description: "What the bot does and its commands", type: 1 },
] as const;

/**
 * Registers the commands: per server when the adapter is limited to some servers (they show
 * at once there), otherwise globally.
 */
export async function registerSlashCommands(rest: REST, applicationId: string, guildIds?: string[]): Promise<void> {
  const body = SLASH_COMMANDS.map((c) => ({ ...c }));
  if (guildIds?.length) {
    for (const guildId of guildIds) await rest.put(Routes.applicationGuildCommands(applicationId, guildId), { body });
  } else {
    await rest.put(Routes.applicationCommands(applicationId), { body });
  }
}
