import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";
import { startTelegramEmulator } from "../emulators/telegram/index.ts";
import { startDiscordEmulator } from "../emulators/discord/index.ts";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { runCli } from "./cli-run.ts";

const TELEGRAM_TOKEN = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DISCORD_TOKEN = "emulator-bot-token-long-enough";
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "gh-doctor-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The finding lines doctor printed for one topic. */
const findingOf = (stdout: string, topic: string) => stdout.split("\n").find((l) => l.slice(7).startsWith(`${topic}:`));

describe("gatehouse doctor", () => {
  it("names every fatal misconfiguration with its fix and exits non-zero", async () => {
    const dir = tempDir();
    const notAFolder = path.join(dir, "file");
    writeFileSync(notAFolder, "");
    writeFileSync(path.join(dir, "gatehouse.json"), JSON.stringify({
      modle: { name: "x" }, slack: { botTokn: "xoxb-1" }, mcp: { servers: { both: { command: "npx", url: "http://127.0.0.1:9/mcp" } } },
    }));
    const result = await runCli(["doctor", "--offline"], {
      GATEHOUSE_CONFIG: "gatehouse.json",
      GATEHOUSE_DATA_DIR: path.join(notAFolder, "data"),
      SLACK_BOT_TOKEN: "xapp-1-A0APP-123-abcdef",
      SLACK_APP_TOKEN: "xoxb-123-456-abcdef",
      LOG_LEVEL: "loud",
    }, { cwd: dir });
    const out = result.stdout;
    expect(findingOf(out, "LOG_LEVEL (logLevel)")).toMatch(/^FATAL /);
    expect(out).toContain("fix: it belongs to another form of this setting: use one form only (an MCP server has either command or url)");
    expect(findingOf(out, "modle")).toMatch(/^FATAL .*unknown key/);
    expect(out).toContain('did you mean "model"?');
    expect(findingOf(out, "slack.botTokn")).toMatch(/^FATAL /);
    expect(out).toContain('did you mean "slack.botToken"?');
    expect(findingOf(out, "SLACK_BOT_TOKEN (slack.botToken)")).toContain("holds an app-level token (xapp-…). Put it in SLACK_APP_TOKEN");
    expect(findingOf(out, "SLACK_APP_TOKEN (slack.appToken)")).toContain("holds a bot token (xoxb-…). Put it in SLACK_BOT_TOKEN");
    expect(findingOf(out, "model")).toMatch(/^FATAL  model: No model endpoint is configured/);
    expect(findingOf(out, "data folder")).toMatch(/^FATAL .*is not writable/);
    expect(out).not.toContain("xapp-1-A0APP-123-abcdef");
    expect(result.code).toBe(1);
  });

  it("names approver rules the bot would refuse at start", async () => {
    const dir = tempDir();
    const rules = [{ tools: ["shel"], approvers: { users: ["U1"] }, selfApprove: false, quorum: 2 }];
    writeFileSync(path.join(dir, "gatehouse.json"), JSON.stringify({ approval: { rules } }));
    const result = await runCli(["doctor", "--offline"], { GATEHOUSE_CONFIG: "gatehouse.json", GATEHOUSE_DATA_DIR: path.join(dir, "data") }, { cwd: dir });
    expect(findingOf(result.stdout, "approval.rules[0].tools")).toMatch(/^FATAL .*"shel" names no tool \(did you mean "shell"\?\)/);
    expect(findingOf(result.stdout, "approval.rules[0].quorum")).toMatch(/^FATAL .*2 different people must approve, but only 1 may/);
    expect(result.code).toBe(1);
  });

  it("warns about a stale Telegram webhook, shell for everyone and receipts without a key, and exits 0", async () => {
    const dir = tempDir();
    const slack: SlackEmulator = await startSlackEmulator();
    cleanups.push(() => slack.close());
    const telegram = await startTelegramEmulator({ token: TELEGRAM_TOKEN });
    cleanups.push(() => telegram.close());
    telegram.state.webhook = { url: "https://old-deployment.example.com/telegram" };
    const model: OpenAIEmulator = await startOpenAIEmulator();
    cleanups.push(() => model.close());
    writeFileSync(path.join(dir, "gatehouse.json"), JSON.stringify({ tools: { elevated: { allowFrom: ["console:*", "telegram:*"] } }, receipts: { enabled: true } }));

    const result = await runCli(["doctor"], {
      GATEHOUSE_CONFIG: "gatehouse.json",
      GATEHOUSE_DATA_DIR: path.join(dir, "data"),
      OPENAI_BASE_URL: model.baseURL,
      SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl,
      TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN, TELEGRAM_API_ROOT: telegram.apiRoot,
    }, { cwd: dir });
    const out = result.stdout;
    expect(findingOf(out, "telegram webhook")).toMatch(/^WARN .*a webhook is still set \(https:\/\/old-deployment\.example\.com\/telegram\) while this bot polls/);
    expect(findingOf(out, "tools.elevated.allowFrom")).toMatch(/^WARN .*shell tool is offered to everyone on telegram \("telegram:\*"\)/);
    expect(out).not.toMatch(/offered to everyone on slack/);
    expect(findingOf(out, "receipts")).toMatch(/^WARN .*without a key/);
    expect(findingOf(out, "slack")).toMatch(/^ok +slack: auth\.test: gatehouse in Emulated/);
    // The emulated app was installed from the manifest, so it holds every scope the manifest asks for.
    expect(findingOf(out, "slack scopes")).toMatch(/^ok +slack scopes: all \d+ scopes of the manifest are granted/);
    expect(findingOf(out, "telegram")).toMatch(/^ok +telegram: getMe: @gatehouse_bot/);
    expect(findingOf(out, "model")).toMatch(/^ok +model: GET \/models/);
    expect(out).toMatch(/No fatal problems, 3 warnings/);
    expect(result.code).toBe(0);
  });

  it("lists the Slack scopes the app lacks and a Discord app without the Message Content intent", async () => {
    const dir = tempDir();
    const slack = await startSlackEmulator({ scopes: ["chat:write", "app_mentions:read", "commands"] });
    cleanups.push(() => slack.close());
    const discord = await startDiscordEmulator({ token: DISCORD_TOKEN, messageContentIntent: false });
    cleanups.push(() => discord.close());
    const model = await startOpenAIEmulator();
    cleanups.push(() => model.close());
    const result = await runCli(["doctor"], {
      GATEHOUSE_DATA_DIR: path.join(dir, "data"),
      OPENAI_BASE_URL: model.baseURL,
      SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl,
      DISCORD_TOKEN: DISCORD_TOKEN, DISCORD_API_URL: discord.apiUrl,
    }, { cwd: dir });
    const out = result.stdout;
    expect(findingOf(out, "slack")).toMatch(/^ok +slack: auth\.test/);
    expect(findingOf(out, "slack scopes")).toMatch(/^WARN .*lacks assistant:write, channels:history, groups:history, im:history, mpim:history, usergroups:read, users:read/);
    expect(findingOf(out, "slack scopes")).not.toContain("chat:write");
    expect(findingOf(out, "discord")).toMatch(/^ok +discord: users\/@me: gatehouse; gateway\/bot answered/);
    expect(findingOf(out, "discord intents")).toMatch(/^FATAL .*Message Content intent is not enabled/);
    expect(out).toContain("Privileged Gateway Intents");
    expect(result.code).toBe(1);
  });

  it("finds the Discord Message Content intent enabled, and calls a model endpoint that is down a network problem", async () => {
    const dir = tempDir();
    const discord = await startDiscordEmulator({ token: DISCORD_TOKEN });
    cleanups.push(() => discord.close());
    const result = await runCli(["doctor"], {
      GATEHOUSE_DATA_DIR: path.join(dir, "data"), OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      DISCORD_TOKEN: DISCORD_TOKEN, DISCORD_API_URL: discord.apiUrl,
    }, { cwd: dir });
    expect(findingOf(result.stdout, "discord")).toMatch(/^ok +discord: users\/@me: .*gateway\/bot answered/);
    expect(findingOf(result.stdout, "discord intents")).toMatch(/^ok +discord intents: Message Content intent enabled/);
    // The model endpoint is down: a network problem, reported as a warning, not a bad key.
    expect(findingOf(result.stdout, "model")).toMatch(/^WARN +model: network: cannot reach http:\/\/127\.0\.0\.1:9/);
    expect(result.code).toBe(0);
  });

  it("says the Discord intent could not be checked when /applications/@me fails", async () => {
    const dir = tempDir();
    const discord = await startDiscordEmulator({ token: DISCORD_TOKEN });
    cleanups.push(() => discord.close());
    discord.failNext("getCurrentApplication", { status: 500, message: "Internal Server Error" });
    const result = await runCli(["doctor"], {
      GATEHOUSE_DATA_DIR: path.join(dir, "data"), OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      DISCORD_TOKEN: DISCORD_TOKEN, DISCORD_API_URL: discord.apiUrl,
    }, { cwd: dir });
    expect(findingOf(result.stdout, "discord intents")).toMatch(/^note +discord intents: the Message Content intent could not be checked: GET \/applications\/@me answered HTTP 500/);
    expect(result.code).toBe(0);
  });
});
