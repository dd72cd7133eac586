/**
 * The online half of `gatehouse doctor`: for each platform whose token is set, ask the platform
 * whether the token works and the app is set up the way the bot needs (Slack scopes, Discord's
 * Message Content intent, no stale Telegram webhook), and whether the model endpoint answers.
 * A network failure is reported as one, never as a bad token.
 */
import { readFileSync } from "node:fs";
import type { Config } from "../config/schema.ts";
import { finding, type Finding } from "./findings.ts";
import {
  DEFAULT_DISCORD_API, DEFAULT_MODEL_API, DEFAULT_SLACK_API, DEFAULT_TELEGRAM_API,
  discordApplicationFlags, probeDiscord, probeModel, probeSlack, probeTelegram, telegramWebhook, type ProbeResult,
} from "./probes.ts";
import { discordInviteUrl } from "./discord-invite.ts";

/** Discord application flags for the Message Content intent: a verified app (100+ servers) gets the first, a smaller app the limited one. */
const GATEWAY_MESSAGE_CONTENT = 1 << 18;
const GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19;

/** The bot scopes and events the Slack app manifest asks for; the one list both setup and doctor use. */
export function slackManifestNeeds(): { scopes: string[]; events: string[] } {
  // Read as data, not imported: src/ never imports adapters/.
  const manifest = JSON.parse(readFileSync(new URL("../../adapters/slack/manifest.json", import.meta.url), "utf8")) as {
    oauth_config?: { scopes?: { bot?: string[] } };
    settings?: { event_subscriptions?: { bot_events?: string[] } };
  };
  return { scopes: manifest.oauth_config?.scopes?.bot ?? [], events: manifest.settings?.event_subscriptions?.bot_events ?? [] };
}

function failed(topic: string, probe: ProbeResult, fix: string): Finding {
  return probe.unreachable
    ? finding("warn", topic, `network: ${probe.detail}`, "check the network, a proxy, or the API URL; the token itself was not checked")
    : finding("fatal", topic, probe.detail, fix);
}

async function slackChecks(config: Config): Promise<Finding[]> {
  const token = config.slack.botToken!;
  const probe = await probeSlack(config.slack.apiUrl ?? DEFAULT_SLACK_API, token);
  if (!probe.ok) return [failed("slack", probe, "copy the Bot User OAuth Token (xoxb-…) again from OAuth & Permissions; reinstall the app if it was revoked")];
  const out = [finding("ok", "slack", `${probe.detail} (${probe.ms} ms)`)];
  const needs = slackManifestNeeds();
  if (!probe.scopes) {
    out.push(finding("note", "slack scopes", "could not be checked: auth.test did not return an x-oauth-scopes header", `make sure the app has: ${needs.scopes.join(", ")}`));
  } else {
    const missing = needs.scopes.filter((s) => !probe.scopes!.includes(s));
    if (missing.length) {
      out.push(finding("warn", "slack scopes", `the app lacks ${missing.join(", ")} (compared with adapters/slack/manifest.json)`, "add them under OAuth & Permissions → Bot Token Scopes, then reinstall the app to the workspace"));
    } else out.push(finding("ok", "slack scopes", `all ${needs.scopes.length} scopes of the manifest are granted`));
  }
  out.push(finding("note", "slack events", "event subscriptions cannot be read with a bot token", `check Event Subscriptions → bot events: ${needs.events.join(", ")}`));
  return out;
}

async function telegramChecks(config: Config): Promise<Finding[]> {
  const root = config.telegram.apiRoot ?? DEFAULT_TELEGRAM_API;
  const token = config.telegram.botToken!;
  const probe = await probeTelegram(root, token);
  if (!probe.ok) return [failed("telegram", probe, "copy the token again from @BotFather (/mybots → API Token)")];
  const out = [finding("ok", "telegram", `${probe.detail} (${probe.ms} ms)`)];
  if (probe.readsAllGroupMessages === false) {
    // Privacy mode: in groups Telegram delivers only commands, replies to the bot and mentions of it.
    out.push(config.telegram.access.mentionGate
      ? finding("note", "telegram groups", "privacy mode is on: in groups the bot receives only messages that mention it, reply to it or are commands, which is all it answers",
        "if group messages addressed to the bot never arrive, remove the bot from the group and add it again (Telegram keeps the privacy setting a bot had when it joined), or make it a group admin")
      : finding("warn", "telegram groups", "privacy mode is on, so in groups Telegram delivers only mentions, replies and commands: with telegram.access.mentionGate false the bot still never sees the other group messages",
        "@BotFather → /setprivacy → your bot → Disable, then remove the bot from each group and add it again"));
  }
  if (!config.telegram.webhookUrl) {
    const hook = await telegramWebhook(root, token);
    if ("failed" in hook) out.push(failed("telegram webhook", hook.failed, "run doctor again"));
    else if (hook.url) {
      out.push(finding("warn", "telegram webhook", `a webhook is still set (${hook.url}) while this bot polls: the bot deletes it at start, and whatever served it stops receiving updates`,
        "if another deployment uses that webhook, give this bot its own token, or set TELEGRAM_WEBHOOK_URL to use webhook mode"));
    }
  }
  return out;
}

async function discordChecks(config: Config): Promise<Finding[]> {
  const api = config.discord.apiUrl ?? DEFAULT_DISCORD_API;
  const token = config.discord.token!;
  const probe = await probeDiscord(api, token);
  if (!probe.ok) return [failed("discord", probe, "reset and copy the token under Developer Portal → your application → Bot")];
  const out = [finding("ok", "discord", `${probe.detail} (${probe.ms} ms)`)];
  const app = await discordApplicationFlags(api, token);
  if ("failed" in app) {
    out.push(finding("note", "discord intents", `the Message Content intent could not be checked: ${app.failed.detail}`));
  } else if (!(app.flags & (GATEWAY_MESSAGE_CONTENT | GATEWAY_MESSAGE_CONTENT_LIMITED))) {
    out.push(finding("fatal", "discord intents", "the Message Content intent is not enabled: Discord refuses the bot's gateway connection (close code 4014)",
      "turn on Developer Portal → your application → Bot → Privileged Gateway Intents → Message Content Intent"));
  } else out.push(finding("ok", "discord intents", "Message Content intent enabled"));
  if (!("failed" in app) && app.id) {
    out.push(finding("note", "discord invite", `add the bot to a server with ${discordInviteUrl(app.id)}`, "open it as a server admin (also: `gatehouse discord invite`)"));
  }
  return out;
}

async function modelChecks(config: Config): Promise<Finding[]> {
  const probe = await probeModel(config.model.baseURL ?? DEFAULT_MODEL_API, config.model.apiKey);
  if (probe.ok) return [finding("ok", "model", `${probe.detail} (${probe.ms} ms)`)];
  // The bot starts without the model answering, but every message would fail.
  if (probe.unreachable) return [finding("warn", "model", `network: ${probe.detail}`, "check OPENAI_BASE_URL and that the server is running")];
  return [finding("warn", "model", probe.detail, "check OPENAI_API_KEY and OPENAI_BASE_URL")];
}

/** Runs the online checks for every platform with a token set and for the model endpoint, in parallel. */
export async function checkPlatforms(config: Config): Promise<Finding[]> {
  const checks: Array<Promise<Finding[]>> = [];
  if (config.slack.botToken) checks.push(slackChecks(config));
  if (config.telegram.botToken) checks.push(telegramChecks(config));
  if (config.discord.token) checks.push(discordChecks(config));
  if (config.model.apiKey || config.model.baseURL) checks.push(modelChecks(config));
  return (await Promise.all(checks)).flat();
}
