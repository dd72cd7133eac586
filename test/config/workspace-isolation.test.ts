/**
 * A workspace that holds the bot's own files (GATEHOUSE_WORKSPACE=.): the auto-approved file tools
 * would read or overwrite .env, receipt.key and every session's saved output. The start is refused
 * with a message that says what to change, and doctor says the same.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load.ts";
import { assertWorkspaceIsolated, workspaceIsolationProblems } from "../../src/config/workspace-isolation.ts";
import { runCli } from "../ops/cli-run.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "gh-isolation-"));
  dirs.push(dir);
  return dir;
}

describe("a workspace holding the bot's own files", () => {
  it("stops the start with a clear message when the workspace contains the data folder, .env and the config file", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, ".env"), "OPENAI_API_KEY=sk-test-not-real\n");
    writeFileSync(path.join(dir, "gatehouse.json"), "{}");
    const env = { GATEHOUSE_WORKSPACE: ".", GATEHOUSE_CONFIG: "gatehouse.json", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" };
    const config = loadConfig({ cwd: dir, env });
    let error: unknown;
    try {
      assertWorkspaceIsolated(config, { cwd: dir, env });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toMatch(/contains the data folder .*data: the file tools could read or overwrite the store/);
    expect(message).toMatch(/contains .*\.env, where the bot reads its secrets/);
    expect(message).toMatch(/contains the config file .*gatehouse\.json/);
    expect(message).toContain("give GATEHOUSE_WORKSPACE a folder of its own");
  });

  it("accepts the default layout and a workspace beside the data folder", () => {
    const dir = tempDir();
    expect(workspaceIsolationProblems(loadConfig({ cwd: dir, env: {} }), { cwd: dir, env: {} })).toEqual([]);
    mkdirSync(path.join(dir, "work"));
    const beside = loadConfig({ cwd: dir, env: { GATEHOUSE_WORKSPACE: "work", GATEHOUSE_DATA_DIR: "data" } });
    expect(workspaceIsolationProblems(beside, { cwd: dir, env: {} })).toEqual([]);
  });

  it("is explained by doctor as fatal", async () => {
    const dir = tempDir();
    const result = await runCli(["doctor", "--offline"], { GATEHOUSE_WORKSPACE: ".", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, { cwd: dir });
    expect(result.stdout).toMatch(/^FATAL  GATEHOUSE_WORKSPACE \(workspace\): .* contains the data folder .*The bot refuses to start\./m);
    expect(result.stdout).toContain("fix: give GATEHOUSE_WORKSPACE a folder of its own");
    expect(result.code).toBe(1);
  });
});
