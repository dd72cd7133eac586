import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { slackManifest } from "../../src/cli/slack-manifest.ts";
import { checkPlatforms } from "../../src/cli/platform-checks.ts";
import { ConfigError, loadConfig } from "../../src/config/load.ts";
import { startBot } from "../../src/main.ts";
import { ChannelSetupError } from "../../src/ports.ts";
import { slackFromConfig } from "../../adapters/slack/from-config.ts";
import { telegramFromConfig } from "../../adapters/telegram/from-config.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";
import { runCli } from "./cli-run.ts";

let telegram: TelegramEmulator | undefined;
let dir: string | undefined;
afterEach(async () => {
  await telegram?.close();
  telegram = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const values = { get: async () => undefined, set: async () => {}, list: async () => [], delete: async () => {} };

describe("the Slack app manifest", () => {
  it("is the committed Socket Mode manifest by default", () => {
    const manifest = slackManifest("socket") as { settings: { socket_mode_enabled: boolean } };
    expect(manifest.settings.socket_mode_enabled).toBe(true);
  });

  it("points events, interactivity and the slash command at <url>/slack/events in HTTP mode", () => {
    const manifest = slackManifest("http", "https://bot.example.com/") as {
      features: { slash_commands: Array<{ url: string }> };
      settings: { socket_mode_enabled: boolean; event_subscriptions: { request_url: string; bot_events: string[] }; interactivity: { request_url: string } };
    };
    const url = "https://bot.example.com/slack/events";
    expect(manifest.settings.socket_mode_enabled).toBe(false);
    expect(manifest.settings.event_subscriptions.request_url).toBe(url);
    expect(manifest.settings.event_subscriptions.bot_events).toContain("app_mention");
    expect(manifest.settings.interactivity.request_url).toBe(url);
    expect(manifest.features.slash_commands.map((c) => c.url)).toEqual([url]);
  });

  it("refuses --http without an https --url", async () => {
    const result = await runCli(["slack", "manifest", "--http"], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--http needs --url");
  });
});

describe("doctor's Telegram group note", () => {
  it("explains privacy mode, and warns when the bot is told to read every group message it cannot get", async () => {
    telegram = await startTelegramEmulator();
    dir = mkdtempSync(path.join(tmpdir(), "gh-privacy-"));
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, GATEHOUSE_DATA_DIR: "data" };
    const gated = await checkPlatforms(loadConfig({ cwd: dir, env }));
    expect(gated.find((f) => f.topic === "telegram groups")).toMatchObject({ severity: "note", fix: expect.stringContaining("add it again") });
  });
});

describe("each adapter builds itself from its config section", () => {
  it("names the missing setting", () => {
    expect(() => slackFromConfig({ settings: {}, log: silentLogger(), values })).toThrow(ChannelSetupError);
    expect(() => slackFromConfig({ settings: { botToken: "xoxb-1" }, log: silentLogger(), values })).toThrow(/SLACK_APP_TOKEN or SLACK_SIGNING_SECRET/);
    expect(() => telegramFromConfig({ settings: { botToken: "1:a", webhookUrl: "https://x.example/t", access: { mentionGate: true } }, log: silentLogger(), values })).toThrow(
      /TELEGRAM_WEBHOOK_SECRET/,
    );
  });

  it("turns a missing setting into the configuration error the bot stops with", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-setup-"));
    const config = loadConfig({ cwd: dir, env: { GATEHOUSE_CHANNELS: "discord", OPENAI_BASE_URL: "http://127.0.0.1:9/v1", GATEHOUSE_DATA_DIR: "data" } });
    const error = await startBot(config, { log: silentLogger() }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(["DISCORD_TOKEN: required for the Discord channel (Developer Portal → Bot → Reset Token)"]);
  });
});

describe("doctor on a fresh machine", () => {
  it("warns, not fails, about a missing model endpoint when only the console would start", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-fresh-"));
    const result = await runCli(["doctor", "--offline"], { GATEHOUSE_DATA_DIR: "data" }, { cwd: dir });
    const line = result.stdout.split("\n").find((l) => l.slice(7).startsWith("model:"));
    expect(line).toMatch(/^WARN +model: No model endpoint is configured\. The console runs on the built-in demo model/);
    expect(result.code).toBe(0);
  });
});
