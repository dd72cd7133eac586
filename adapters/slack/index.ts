/** The Slack channel: adapter factory, options and capabilities. */
export { createSlackAdapter, SLACK_CAPABILITIES, type SlackChannelAdapter } from "./adapter.ts";
export { slackOptionsFromEnv, type SlackAdapterOptions } from "./options.ts";
export { markdownToMrkdwn } from "./mrkdwn.ts";
