/**
 * The Slack adapter's options (from-config.ts fills them from the config's `slack` section:
 * SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL).
 */
import type { Logger } from "pino";
import type { HttpRoutes } from "../../src/ports.ts";

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
  /**
   * HTTP mode: where the events endpoint listens (default port 3000 on all interfaces, path
   * /slack/events), or the shared HTTP server (`routes`) it is mounted on (port and host then unused).
   */
  http?: { port?: number; host?: string; path?: string; routes?: HttpRoutes };
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
