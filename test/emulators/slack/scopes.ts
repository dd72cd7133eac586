/**
 * OAuth scopes in the Slack emulator: which scopes the app was granted (by default every bot
 * scope the app manifest asks for), which scope each emulated method needs, and the
 * `x-oauth-scopes` / `x-accepted-oauth-scopes` headers Slack puts on Web API responses.
 */
import { readFileSync } from "node:fs";

/** The bot scopes `adapters/slack/manifest.json` asks for: what an app installed from it is granted. */
export const MANIFEST_BOT_SCOPES: readonly string[] = (() => {
  const manifest = JSON.parse(readFileSync(new URL("../../../adapters/slack/manifest.json", import.meta.url), "utf8")) as {
    oauth_config?: { scopes?: { bot?: string[] } };
  };
  return manifest.oauth_config?.scopes?.bot ?? [];
})();

/** What an app-level token (xapp-…) carries when made with the Socket Mode scope. */
export const APP_TOKEN_SCOPES: readonly string[] = ["connections:write"];

/** The scope a history read needs depends on the kind of conversation, told by its id's first letter. */
function historyScope(channel: unknown): string {
  const id = typeof channel === "string" ? channel : "";
  if (id.startsWith("D")) return "im:history";
  if (id.startsWith("G")) return "groups:history";
  return "channels:history";
}

/** The scope `method` needs with these arguments, or undefined when any valid token may call it. */
export function scopeNeeded(method: string, args: Record<string, unknown>): string | undefined {
  switch (method) {
    case "chat.postMessage":
    case "chat.update":
    case "chat.postEphemeral":
      return "chat:write";
    case "users.info":
      return "users:read";
    case "usergroups.list":
    case "usergroups.users.list":
      return "usergroups:read";
    case "assistant.threads.setStatus":
      return "assistant:write";
    case "conversations.replies":
      return historyScope(args.channel);
    case "apps.connections.open":
      return "connections:write";
    default:
      return undefined;
  }
}

/** Slack's scope headers for a response to a call made with a token holding `granted`. */
export function scopeHeaders(granted: readonly string[], needed: string | undefined): Record<string, string> {
  return { "x-oauth-scopes": granted.join(","), "x-accepted-oauth-scopes": needed ?? "" };
}
