/**
 * The payloads Slack sends an app: event callbacks (message, app_mention), block_actions
 * interactions and slash commands, shaped like the real ones.
 */
import { randomUUID } from "node:crypto";
import type { EmulatedMessage, SlackWorld } from "./state.ts";

/** The Events API subscriptions the emulated app has (as in its manifest). */
export type Subscription = "app_mention" | "message.channels" | "message.groups" | "message.im" | "message.mpim";

export const ALL_SUBSCRIPTIONS: Subscription[] = ["app_mention", "message.channels", "message.groups", "message.im", "message.mpim"];

/** Slack's channel_type for a channel id. */
export function channelTypeOf(channel: string): "im" | "mpim" | "group" | "channel" {
  if (channel.startsWith("D")) return "im";
  if (channel.startsWith("M")) return "mpim";
  if (channel.startsWith("G")) return "group";
  return "channel";
}

function wrapEvent(world: SlackWorld, event: Record<string, unknown>): Record<string, unknown> {
  return {
    token: "emulator-verification-token",
    team_id: world.teamId,
    api_app_id: world.appId,
    event,
    type: "event_callback",
    event_id: `Ev${randomUUID().replace(/-/g, "").slice(0, 10).toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: world.teamId, user_id: world.botUserId, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
  };
}

/** The event callbacks Slack sends for a newly posted message, given the app's subscriptions. */
export function eventsForPost(world: SlackWorld, message: EmulatedMessage, subscriptions: Subscription[], extra: Record<string, unknown> = {}): Record<string, unknown>[] {
  const type = channelTypeOf(message.channel);
  const parent = message.threadTs ? world.findMessage(message.channel, message.threadTs) : undefined;
  const base: Record<string, unknown> = {
    user: message.user,
    text: message.text,
    ts: message.ts,
    channel: message.channel,
    event_ts: message.ts,
    team: world.teamId,
    ...(message.botId ? { bot_id: message.botId, subtype: "bot_message" } : {}),
    ...(message.threadTs ? { thread_ts: message.threadTs, parent_user_id: parent?.user } : {}),
    ...extra,
  };
  const out: Record<string, unknown>[] = [];
  const messageSub: Subscription = type === "im" ? "message.im" : type === "mpim" ? "message.mpim" : type === "group" ? "message.groups" : "message.channels";
  if (subscriptions.includes(messageSub)) out.push(wrapEvent(world, { type: "message", channel_type: type, ...base }));
  const mentionsBot = message.text.includes(`<@${world.botUserId}>`);
  if (mentionsBot && type !== "im" && subscriptions.includes("app_mention") && !extra.subtype) {
    out.push(wrapEvent(world, { type: "app_mention", ...base }));
  }
  return out;
}

/** A block_actions payload for a click on `value` in `message` by `user`. */
export function blockActionsPayload(world: SlackWorld, message: EmulatedMessage, user: string, action: { actionId: string; value: string; label: string }, responseUrl: string): Record<string, unknown> {
  const u = world.users.get(user);
  return {
    type: "block_actions",
    user: { id: user, username: u?.name ?? user, name: u?.name ?? user, team_id: world.teamId },
    api_app_id: world.appId,
    token: "emulator-verification-token",
    container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false, thread_ts: message.threadTs },
    trigger_id: `${Date.now()}.${randomUUID().slice(0, 8)}`,
    team: { id: world.teamId, domain: "emulated" },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: message.channel, name: message.channel.toLowerCase() },
    message: { type: "message", user: message.user, bot_id: message.botId, ts: message.ts, thread_ts: message.threadTs, text: message.text, blocks: message.blocks },
    state: { values: {} },
    response_url: responseUrl,
    actions: [{
      action_id: action.actionId, block_id: "approval", text: { type: "plain_text", text: action.label, emoji: true },
      value: action.value, type: "button", action_ts: String(Date.now() / 1000),
    }],
  };
}

/** A slash command payload (`/gatehouse stop`). */
export function slashCommandPayload(world: SlackWorld, channel: string, user: string, command: string, text: string, responseUrl: string): Record<string, string> {
  return {
    token: "emulator-verification-token",
    team_id: world.teamId,
    team_domain: "emulated",
    channel_id: channel,
    channel_name: channel.toLowerCase(),
    user_id: user,
    user_name: world.users.get(user)?.name ?? user,
    command,
    text,
    api_app_id: world.appId,
    is_enterprise_install: "false",
    response_url: responseUrl,
    trigger_id: `${Date.now()}.${randomUUID().slice(0, 8)}`,
  };
}
