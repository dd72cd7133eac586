import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
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
});
