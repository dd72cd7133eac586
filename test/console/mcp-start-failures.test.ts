/**
 * The console names the MCP servers that failed at start as soon as it opens: the person at the
 * terminal does not read the log, and would otherwise only learn it when a tool answers "unavailable".
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { createConsoleAdapter } from "../../adapters/console/console-adapter.ts";
import { loadConfig } from "../../src/config/load.ts";
import { startBot, type Bot } from "../../src/main.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { FIXTURE_SERVER } from "../mcp/helpers.ts";

let emu: OpenAIEmulator | undefined;
let bot: Bot | undefined;
let dir: string | undefined;
afterEach(async () => {
  await bot?.stop();
  await emu?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  bot = emu = dir = undefined;
});

async function openConsole(servers: Record<string, unknown>): Promise<string> {
  dir = mkdtempSync(path.join(tmpdir(), "gh-console-mcp-"));
  emu = await startOpenAIEmulator();
  writeFileSync(path.join(dir, "gatehouse.json"), JSON.stringify({ mcp: { servers } }));
  let screen = "";
  const output = new PassThrough();
  output.on("data", (d: Buffer) => (screen += d.toString()));
  const config = loadConfig({ cwd: dir, env: { OPENAI_BASE_URL: emu.baseURL, GATEHOUSE_DATA_DIR: "data", GATEHOUSE_CONFIG: "gatehouse.json" } });
  bot = await startBot(config, { adapters: [createConsoleAdapter({ input: new PassThrough(), output, interactive: false })], log: silentLogger() });
  return screen;
}

describe("the console when MCP servers failed at start", () => {
  it("prints one line per failed server, with its reason, right after the banner", async () => {
    const screen = await openConsole({
      github: { command: process.execPath, args: ["-e", "console.error('GITHUB_TOKEN is not set'); process.exit(1)"] },
      fx: { command: process.execPath, args: [FIXTURE_SERVER] },
    });
    const lines = screen.trim().split("\n");
    expect(lines[0]).toMatch(/^Gatehouse console\./);
    expect(lines.slice(1)).toEqual([
      '⚠ MCP server "github" did not start: the server process exited with code 1; GITHUB_TOKEN is not set; its tools are unavailable.',
    ]);
  });

  it("prints nothing more when every server started", async () => {
    const screen = await openConsole({ fx: { command: process.execPath, args: [FIXTURE_SERVER] } });
    expect(screen.trim().split("\n")).toHaveLength(1);
  });
});
