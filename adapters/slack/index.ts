/** The Slack channel: adapter factory, options and capabilities. */
export { createSlackAdapter, SLACK_CAPABILITIES, type SlackChannelAdapter } from "./adapter.ts";
export type { SlackAdapterOptions } from "./options.ts";
export { slackFromConfig, type SlackSettings } from "./from-config.ts";
export { markdownToMrkdwn } from "./mrkdwn.ts";
