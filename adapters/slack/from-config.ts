/**
 * Builds the Slack adapter from the config's `slack` section: Socket Mode when the app token is set,
 * else the HTTP Events API with the signing secret — mounted on the shared HTTP server when PORT is
 * set, else listening on `slack.port` (default 3000). An explicit `slack.port` keeps a listener of
 * its own even when PORT is set.
 */
import { ChannelSetupError, type ChannelSetup } from "../../src/ports.ts";
import { createSlackAdapter, type SlackChannelAdapter } from "./adapter.ts";
import type { SlackAdapterOptions } from "./options.ts";

/** The keys of the config's `slack` section this adapter reads. */
export interface SlackSettings {
  botToken?: string;
  appToken?: string;
  signingSecret?: string;
  apiUrl?: string;
  port?: number;
  slashCommand?: string;
}

/** The Slack adapter for these settings; throws ChannelSetupError naming what to set. */
export function slackFromConfig(setup: ChannelSetup<SlackSettings>): SlackChannelAdapter {
  const s = setup.settings;
  if (!s.botToken) throw new ChannelSetupError(["SLACK_BOT_TOKEN: required for the Slack channel (a bot token starting with xoxb-)"]);
  if (!s.appToken && !s.signingSecret) {
    throw new ChannelSetupError(["SLACK_APP_TOKEN or SLACK_SIGNING_SECRET: set the app token (xapp-…) for Socket Mode, or the signing secret for the HTTP Events API"]);
  }
  const http: SlackAdapterOptions["http"] =
    setup.http && s.port === undefined ? { routes: setup.http } : { port: s.port ?? 3000, ...(setup.httpHost ? { host: setup.httpHost } : {}) };
  return createSlackAdapter({
    botToken: s.botToken, appToken: s.appToken, signingSecret: s.signingSecret, apiUrl: s.apiUrl, http, slashCommand: s.slashCommand, log: setup.log,
  });
}
