/**
 * The emulated bot's application, as `GET /applications/@me` shows it: its id, name, owner,
 * install settings and the flags that say which privileged gateway intents are switched on.
 */
import type { DiscordState } from "./state.ts";

/** Application flags the emulator sets (Discord's values). */
export const ApplicationFlags = {
  /** Message Content intent granted to a verified app (100 or more servers). */
  GatewayMessageContent: 1 << 18,
  /** Message Content intent switched on in the Developer Portal by an app in fewer than 100 servers. */
  GatewayMessageContentLimited: 1 << 19,
  /** The app registered global application commands. */
  ApplicationCommandBadge: 1 << 23,
} as const;

/** How the app is set up in the Developer Portal; one object shared with the gateway, so both agree. */
export interface ApplicationSettings {
  /** The privileged Message Content intent is switched on. */
  messageContentIntent: boolean;
}

/** The application object of `GET /applications/@me`. */
export function applicationJson(state: DiscordState, settings: ApplicationSettings): Record<string, unknown> {
  // The emulated bot serves one server, so the intent shows as the "limited" flag, as for any unverified bot.
  let flags = settings.messageContentIntent ? ApplicationFlags.GatewayMessageContentLimited : 0;
  if (state.commands.has("global")) flags |= ApplicationFlags.ApplicationCommandBadge;
  const owner = { id: "100000000000000001", username: "owner", global_name: "App Owner", discriminator: "0", avatar: null };
  return {
    id: state.applicationId,
    name: state.bot.username,
    icon: null,
    description: "",
    summary: "",
    bot_public: true,
    bot_require_code_grant: false,
    bot: state.bot,
    owner,
    team: null,
    verify_key: "0".repeat(64),
    flags,
    approximate_guild_count: 1,
    approximate_user_install_count: 0,
    redirect_uris: [],
    interactions_endpoint_url: null,
    role_connections_verification_url: null,
    event_webhooks_url: null,
    event_webhooks_status: 1,
    install_params: { scopes: ["bot", "applications.commands"], permissions: "0" },
    integration_types_config: { "0": { oauth2_install_params: { scopes: ["bot", "applications.commands"], permissions: "0" } }, "1": {} },
  };
}
