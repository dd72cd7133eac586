/**
 * `gatehouse discord invite [--client-id ID]`: the URL that adds the bot to a server with exactly
 * the scopes and permissions it needs. Doctor prints it too once it knows the application id.
 */
import { loadConfig } from "../config/load.ts";
import { readArgs } from "./args.ts";
import { DEFAULT_DISCORD_API, discordApplicationFlags } from "./probes.ts";

/** What the bot does in a server, as Discord permission bits. */
export const DISCORD_PERMISSIONS = {
  "View Channels": 1n << 10n,
  "Send Messages": 1n << 11n,
  "Read Message History": 1n << 16n,
  "Create Public Threads": 1n << 35n,
  "Send Messages in Threads": 1n << 38n,
} as const;

/** `bot` joins the server; `applications.commands` lets it register its slash commands (/stop, /status, /new, …). */
export const DISCORD_SCOPES = ["bot", "applications.commands"] as const;

/** The OAuth2 URL that invites the application `clientId`. */
export function discordInviteUrl(clientId: string): string {
  const permissions = Object.values(DISCORD_PERMISSIONS).reduce((sum, bit) => sum | bit, 0n);
  const query = new URLSearchParams({ client_id: clientId, scope: DISCORD_SCOPES.join(" "), permissions: permissions.toString() });
  return `https://discord.com/oauth2/authorize?${query.toString()}`;
}

export async function runDiscord(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const usage = "usage: gatehouse discord invite [--client-id ID]\n";
  if (sub !== "invite") {
    process.stderr.write(sub ? `gatehouse discord: unknown subcommand "${sub}"\n${usage}` : usage);
    return 2;
  }
  const { values } = readArgs(rest, { "client-id": { type: "string" } });
  let clientId = values["client-id"] as string | undefined;
  if (!clientId) {
    const config = loadConfig();
    if (!config.discord.token) {
      process.stderr.write("gatehouse discord invite: set DISCORD_TOKEN (to read the application id from Discord), or pass --client-id\n");
      return 2;
    }
    const app = await discordApplicationFlags(config.discord.apiUrl ?? DEFAULT_DISCORD_API, config.discord.token);
    if ("failed" in app || !app.id) {
      process.stderr.write(`gatehouse discord invite: could not read the application id (${"failed" in app ? app.failed.detail : "no id in the answer"}); pass --client-id\n`);
      return 1;
    }
    clientId = app.id;
  }
  process.stdout.write(`${discordInviteUrl(clientId)}\n`);
  process.stderr.write(`# scopes: ${DISCORD_SCOPES.join(", ")}; permissions: ${Object.keys(DISCORD_PERMISSIONS).join(", ")}\n`);
  return 0;
}
