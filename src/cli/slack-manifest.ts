/**
 * `gatehouse slack manifest [--http --url URL]`: the Slack app manifest to paste when creating the
 * app, for Socket Mode (the committed adapters/slack/manifest.json) or for the HTTP Events API,
 * with every request URL (events, interactivity, the slash command) set to `<url>/slack/events`.
 */
import { readFileSync } from "node:fs";
import { readArgs } from "./args.ts";

/** The path Slack posts to on the bot's HTTP server. */
export const SLACK_EVENTS_PATH = "/slack/events";

interface Manifest {
  features?: { slash_commands?: Array<Record<string, unknown>> };
  settings?: { event_subscriptions?: Record<string, unknown>; interactivity?: Record<string, unknown>; socket_mode_enabled?: boolean };
  [key: string]: unknown;
}

/** The manifest for one mode; `url` is the bot's public base URL (required for HTTP). */
export function slackManifest(mode: "socket" | "http", url?: string): Manifest {
  // Read as data, not imported: src/ never imports adapters/.
  const manifest = JSON.parse(readFileSync(new URL("../../adapters/slack/manifest.json", import.meta.url), "utf8")) as Manifest;
  if (mode === "socket") return manifest;
  if (!url) throw new Error("the HTTP Events API needs the bot's public URL (--url https://…)");
  const requestUrl = `${url.replace(/\/+$/, "")}${SLACK_EVENTS_PATH}`;
  const settings = manifest.settings ?? {};
  return {
    ...manifest,
    features: { ...manifest.features, slash_commands: (manifest.features?.slash_commands ?? []).map((c) => ({ ...c, url: requestUrl })) },
    settings: {
      ...settings,
      event_subscriptions: { request_url: requestUrl, ...settings.event_subscriptions },
      interactivity: { ...settings.interactivity, is_enabled: true, request_url: requestUrl },
      socket_mode_enabled: false,
    },
  };
}

export async function runSlack(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const usage = "usage: gatehouse slack manifest [--http --url https://your.host]\n";
  if (sub !== "manifest") {
    process.stderr.write(sub ? `gatehouse slack: unknown subcommand "${sub}"\n${usage}` : usage);
    return 2;
  }
  const { values } = readArgs(rest, { http: { type: "boolean" }, url: { type: "string" } });
  const url = values.url as string | undefined;
  if (values.http && !url) {
    process.stderr.write(`gatehouse slack manifest: --http needs --url, the bot's public base URL (e.g. https://bot.example.com)\n${usage}`);
    return 2;
  }
  if (url && !/^https:\/\//.test(url)) {
    process.stderr.write("gatehouse slack manifest: --url must start with https:// (Slack posts only to HTTPS request URLs)\n");
    return 2;
  }
  const mode = values.http || url ? "http" : "socket";
  process.stdout.write(`${JSON.stringify(slackManifest(mode, url), null, 2)}\n`);
  process.stderr.write(
    mode === "socket"
      ? "# Socket Mode: after creating the app, generate an app-level token (connections:write) for SLACK_APP_TOKEN.\n"
      : `# HTTP Events API: Slack posts to ${url!.replace(/\/+$/, "")}${SLACK_EVENTS_PATH}; set SLACK_SIGNING_SECRET, and PORT where that URL arrives.\n`,
  );
  return 0;
}
