/**
 * The Slack adapter's options, and how they are read from the environment
 * (SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL).
 */
import type { Logger } from "pino";

export interface SlackAdapterOptions {
  /** Bot token (xoxb-…), from SLACK_BOT_TOKEN. */
  botToken: string;
  /** App-level token (xapp-…) for Socket Mode, from SLACK_APP_TOKEN. */
  appToken?: string;
  /** Signing secret for HTTP Events API mode, from SLACK_SIGNING_SECRET. */
  signingSecret?: string;
  /** "socket" when an app token is set, otherwise "http". */
  mode?: "socket" | "http";
  /** Web API base URL (SLACK_API_URL), e.g. a proxy or the test emulator; default https://slack.com/api/. */
  apiUrl?: string;
  /** HTTP mode: where the events endpoint listens (default port 3000 on all interfaces, path /slack/events). */
  http?: { port?: number; host?: string; path?: string };
  /** Slash command the app answers (`/gatehouse stop`); default "/gatehouse". */
  slashCommand?: string;
  /** The text of the assistant thread status while a turn runs. */
  workingStatus?: string;
  /** Socket Mode: how long the client waits for a pong, and the base reconnect delay (ms). */
  socketPingTimeoutMs?: number;
  /** Account name, for multi-workspace setups. */
  account?: string;
  log?: Logger;
}

/** Reads the adapter's options from env; undefined when SLACK_BOT_TOKEN is not set (the channel stays off). */
export function slackOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): SlackAdapterOptions | undefined {
  const botToken = env.SLACK_BOT_TOKEN?.trim();
  if (!botToken) return undefined;
  return {
    botToken,
    appToken: env.SLACK_APP_TOKEN?.trim() || undefined,
    signingSecret: env.SLACK_SIGNING_SECRET?.trim() || undefined,
    apiUrl: env.SLACK_API_URL?.trim() || undefined,
    http: env.PORT ? { port: Number(env.PORT) } : undefined,
  };
}
