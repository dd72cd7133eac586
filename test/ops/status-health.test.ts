import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { RuntimeStatus, type StatusSnapshot } from "../../src/observe/runtime-status.ts";
import { createObserver } from "../../src/observe/observer.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { runCli } from "./cli-run.ts";

let dataDir: string | undefined;
afterEach(() => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

describe("a channel whose connection broke while running", () => {
  it("is written to the status snapshot and shown by gatehouse status with what to do", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-health-"));
    const status = new RuntimeStatus(dataDir, createObserver(silentLogger()));
    status.started({
      channels: ["telegram"],
      health: () => [{ channel: "telegram", ok: false, detail: "another process polls this bot (409); stop it or give this one its own token" }],
      model: "http://127.0.0.1:9/v1",
      gateway: { status: () => ({ runningTurns: 0, pendingApprovals: 0 }) },
      mcp: { status: () => [] },
    });
    const snapshot = JSON.parse(readFileSync(path.join(dataDir, "status.json"), "utf8")) as StatusSnapshot;
    expect(snapshot.unhealthy).toEqual([{ channel: "telegram", detail: expect.stringContaining("409") }]);

    writeFileSync(path.join(dataDir, "gatehouse.pid"), String(process.pid));
    const result = await runCli(["status"], { GATEHOUSE_DATA_DIR: dataDir, TELEGRAM_BOT_TOKEN: "123:abc", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    status.stopped();
    expect(result.stdout).toMatch(/telegram: NOT CONNECTED: another process polls this bot \(409\)/);
  });
});
