import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import type { StatusSnapshot } from "../../src/observe/runtime-status.ts";
import { runCli } from "./cli-run.ts";

/** A 127.0.0.1 port nothing listens on (bound, then released). */
async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let dataDir: string;
let slack: SlackEmulator | undefined;
let model: OpenAIEmulator | undefined;

afterEach(async () => {
  await slack?.close();
  await model?.close();
  slack = undefined;
  model = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

describe("gatehouse status", () => {
  it("--deep reports a healthy Slack and a Telegram that cannot be reached", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-status-"));
    slack = await startSlackEmulator();
    model = await startOpenAIEmulator({ model: "emulated-llm" });
    const port = await unusedPort();
    const result = await runCli(["status", "--deep"], {
      GATEHOUSE_DATA_DIR: dataDir,
      OPENAI_BASE_URL: model.baseURL,
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_APP_TOKEN: slack.appToken,
      SLACK_API_URL: slack.apiUrl,
      TELEGRAM_BOT_TOKEN: "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ",
      TELEGRAM_API_ROOT: `http://127.0.0.1:${port}`,
    });
    expect(result.stderr).toBe("");
    const lines = result.stdout.split("\n");
    expect(lines.find((l) => l.startsWith("Process:"))).toContain("not running (no pid file)");
    expect(lines.find((l) => l.startsWith("Channels:"))).toContain("slack, telegram (configured)");
    expect(lines.find((l) => /^\s+slack\s/.test(l))).toMatch(/^\s+slack\s+ok\s+\d+ ms\s+auth\.test: gatehouse in Emulated$/);
    expect(lines.find((l) => /^\s+telegram\s/.test(l))).toMatch(new RegExp(`telegram\\s+FAILED\\s+\\d+ ms\\s+cannot reach http://127\\.0\\.0\\.1:${port}: connection refused`));
    expect(lines.find((l) => /^\s+model\s/.test(l))).toMatch(/model\s+ok\s+\d+ ms\s+GET \/models: 1 model \(emulated-llm\)/);
    expect(result.stdout).not.toContain(slack.botToken);
    // Not running and a failed probe: not healthy.
    expect(result.code).toBe(1);
  });

  it("detects a stale pid file left by a bot that did not shut down", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-status-"));
    // A pid far above any real pid_max, so it is never alive.
    writeFileSync(path.join(dataDir, "gatehouse.pid"), "99999999");
    const result = await runCli(["status"], { GATEHOUSE_DATA_DIR: dataDir, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(result.stdout).toMatch(/Process:\s+not running: stale pid file \(pid 99999999 is gone/);
    expect(result.code).toBe(1);
  });

  it("reports the running bot's parked turns, the model it really uses, and lines under a label without a stray colon", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-status-"));
    const now = new Date().toISOString();
    const snapshot: StatusSnapshot = {
      pid: process.pid, startedAt: now, updatedAt: now, channels: ["console", "slack"], model: "the built-in demo model (a short script, not an LLM)",
      runningTurns: 1, parkedTurns: 2, askingTurns: 1, pendingApprovals: 2, sessionsSeen: 3, mcp: [],
      unhealthy: [{ channel: "slack", detail: "the app token was revoked" }],
    };
    writeFileSync(path.join(dataDir, "gatehouse.pid"), String(process.pid));
    writeFileSync(path.join(dataDir, "status.json"), JSON.stringify(snapshot));
    const result = await runCli(["status"], { GATEHOUSE_DATA_DIR: dataDir, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(result.stdout).toMatch(/^Turns: +1 running, 2 parked \(waiting for a person\), 1 waiting for an answer to a tool's question$/m);
    expect(result.stdout).toMatch(/^Model: +\S+ at http:\/\/127\.0\.0\.1:9\/v1; running: the built-in demo model \(a short script, not an LLM\)$/m);
    expect(result.stdout).toMatch(/^ {12}slack: NOT CONNECTED: the app token was revoked$/m);
    expect(result.stdout).not.toMatch(/^:/m);
  });

  it("with an invalid configuration still says the bot runs, then lists every config problem, and exits 2", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-status-"));
    // A bot that is alive and refreshing its status: this test's own process stands in for it.
    const now = new Date().toISOString();
    const snapshot: StatusSnapshot = {
      pid: process.pid, startedAt: now, updatedAt: now, channels: ["slack"], model: "emulated-llm",
      runningTurns: 1, pendingApprovals: 0, sessionsSeen: 3, mcp: [],
    };
    writeFileSync(path.join(dataDir, "gatehouse.pid"), String(process.pid));
    writeFileSync(path.join(dataDir, "status.json"), JSON.stringify(snapshot));
    writeFileSync(path.join(dataDir, "gatehouse.json"), JSON.stringify({ modle: { name: "x" } }));
    const result = await runCli(["status"], {
      GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_CONFIG: path.join(dataDir, "gatehouse.json"), LOG_LEVEL: "loud",
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(new RegExp(`Process:\\s+running, pid ${process.pid}`));
    expect(result.stdout).toMatch(/Channels:\s+running: slack/);
    expect(result.stdout).toMatch(/Turns:\s+1 running/);
    expect(result.stdout).toContain("Configuration: invalid, 2 problems (the running bot keeps the settings it started with, but a restart would fail):");
    expect(result.stdout).toMatch(/^ {2}- modle: unknown key/m);
    expect(result.stdout).toMatch(/^ {2}- LOG_LEVEL \(logLevel\): /m);
    expect(result.code).toBe(2);
  });

  it("with an invalid configuration finds the data folder the config file names, and reports a stale pid file", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-status-"));
    const botData = path.join(dataDir, "bot-data");
    mkdirSync(botData);
    writeFileSync(path.join(botData, "gatehouse.pid"), "99999999");
    writeFileSync(path.join(dataDir, "gatehouse.json"), JSON.stringify({ dataDir: "bot-data", approval: { timeoutMs: "soon" } }));
    const result = await runCli(["status", "--deep"], { GATEHOUSE_CONFIG: "gatehouse.json" }, { cwd: dataDir });
    expect(result.stdout).toContain(`data folder ${botData}`);
    expect(result.stdout).toMatch(/Process:\s+not running: stale pid file \(pid 99999999 is gone/);
    expect(result.stdout).toContain("Probes: skipped until the configuration is valid.");
    expect(result.stdout).toContain("Configuration: invalid, 1 problem (the bot cannot start until it is fixed):");
    expect(result.stdout).toMatch(/^ {2}- approval\.timeoutMs: /m);
    expect(result.code).toBe(2);
  });
});
