/**
 * server-everything's elicitation tool in the whole bot on the console channel: the server's form
 * is asked at the terminal field by field, a wrong answer is asked again, and the answers reach the
 * server (its tool result, which the model gets, repeats them).
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { createConsoleAdapter } from "../../adapters/console/console-adapter.ts";
import { loadConfig } from "../../src/config/load.ts";
import { startBot, type Bot } from "../../src/main.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { waitUntil } from "../support/wait.ts";
import { toolMessages } from "../engine/fixture.ts";

const packageJson = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json");
const EVERYTHING_BIN = path.join(path.dirname(packageJson), "dist", "index.js");

let emu: OpenAIEmulator | undefined;
let bot: Bot | undefined;
let dir: string | undefined;
afterEach(async () => {
  await bot?.stop();
  await emu?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  bot = emu = dir = undefined;
});

/** A bot on a piped console with server-everything as MCP server `every`; lines typed wait for the questions. */
async function consoleWithEverything() {
  dir = mkdtempSync(path.join(tmpdir(), "gh-elicit-"));
  emu = await startOpenAIEmulator();
  const config = { mcp: { servers: { every: { command: process.execPath, args: [EVERYTHING_BIN, "stdio"], readOnlyTools: ["trigger-elicitation-request"] } } } };
  writeFileSync(path.join(dir, "gatehouse.json"), JSON.stringify(config));
  const input = new PassThrough();
  const output = new PassThrough();
  let screen = "";
  output.on("data", (d: Buffer) => (screen += d.toString()));
  const loaded = loadConfig({ cwd: dir, env: { OPENAI_BASE_URL: emu.baseURL, GATEHOUSE_DATA_DIR: "data", GATEHOUSE_CONFIG: "gatehouse.json" } });
  bot = await startBot(loaded, { adapters: [createConsoleAdapter({ input, output, interactive: false, user: { id: "me", name: "Me" } })], log: silentLogger() });
  return { type: (...lines: string[]) => lines.forEach((l) => input.write(`${l}\n`)), screen: () => screen };
}

describe("an MCP server's question on the console", () => {
  it("is asked field by field at the terminal and the server gets the answers", async () => {
    const t = await consoleWithEverything();
    emu!.script({ toolCalls: [{ name: "every__trigger-elicitation-request", arguments: "{}" }] }, { text: "Thanks, Ada." });
    t.type("sign me up");
    // In a piped session the lines wait until a question takes them, one per field.
    t.type(
      "Ada Lovelace", // name (required)
      "yes", // check
      "", // firstLine: keep the default
      "ada@example.com",
      "skip", // homepage
      "1815-12-10",
      "500", // integer: out of range, asked again
      "7",
      "", // number: default 3.14
      "Joey",
      "2, Drums",
      "Wonder Woman",
      "", // fish: default
      "Dogs",
      "send",
    );
    await waitUntil(() => expect(t.screen()).toContain("gatehouse › Thanks, Ada."), { timeout: 20_000 });
    const screen = t.screen();
    expect(screen).toContain('❓ MCP server "every" asks: Please provide inputs for the following fields:');
    expect(screen).toMatch(/\(1\/13\) String — Your full, legal name \(required\)/);
    expect(screen).toContain("⚠️ the most allowed is 100. Try again.");
    expect(screen).toContain('Send these answers to MCP server "every"?');

    const result = toolMessages(emu!.requests[1]!.body)[0]!.content;
    expect(result).toContain("✅ User provided the requested information!");
    expect(result).toContain("- Name: Ada Lovelace");
    expect(result).toContain("- Agreed to terms: true");
    expect(result).toContain("- Favorite Integer: 7");
    const raw = JSON.parse(result.slice(result.indexOf("{"))) as { action: string; content: Record<string, unknown> };
    expect(raw).toEqual({
      action: "accept",
      content: {
        name: "Ada Lovelace", check: true, firstLine: "It was a dark and stormy night.", email: "ada@example.com", birthdate: "1815-12-10",
        integer: 7, number: 3.14, untitledSingleSelectEnum: "Joey", untitledMultipleSelectEnum: ["Piano", "Drums"],
        titledSingleSelectEnum: "hero-3", titledMultipleSelectEnum: ["fish-1"], legacyTitledEnum: "pet-2",
      },
    });
  }, 40_000);

  it("tells the server the person declined", async () => {
    const t = await consoleWithEverything();
    emu!.script({ toolCalls: [{ name: "every__trigger-elicitation-request", arguments: "{}" }] }, { text: "All right." });
    t.type("sign me up", "decline");
    await waitUntil(() => expect(t.screen()).toContain("gatehouse › All right."), { timeout: 20_000 });
    const result = toolMessages(emu!.requests[1]!.body)[0]!.content;
    expect(result).toContain("❌ User declined to provide the requested information.");
  }, 40_000);

  it("stops the turn on /stop typed at the question: the model is not asked again", async () => {
    const t = await consoleWithEverything();
    emu!.script({ toolCalls: [{ name: "every__trigger-elicitation-request", arguments: "{}" }] }, { text: "not expected" });
    t.type("sign me up", "/stop");
    await waitUntil(() => expect(t.screen()).toContain("gatehouse › Stopped."), { timeout: 20_000 });
    expect(t.screen()).toContain('❓ MCP server "every" asks');
    expect(t.screen()).not.toContain("not expected");
    expect(emu!.requests).toHaveLength(1);
  }, 40_000);
});
