/**
 * Terminal spoofing through the console: a model answer, a progress line and an approval question
 * carrying escape sequences (erase the line, move the cursor up, set the title, a carriage return
 * that overwrites what is shown) reach the screen as plain text.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { createConsoleAdapter } from "../../adapters/console/console-adapter.ts";
import { terminalSafe } from "../../adapters/console/terminal-text.ts";
import { loadConfig } from "../../src/config/load.ts";
import { startBot, type Bot } from "../../src/main.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { waitUntil } from "../support/wait.ts";

let emu: OpenAIEmulator | undefined;
let bot: Bot | undefined;
let dir: string | undefined;
afterEach(async () => {
  await bot?.stop();
  await emu?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  bot = emu = dir = undefined;
});

// eslint-disable-next-line no-control-regex -- the attack is control characters
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const SPOOF = "\u001b]0;owned\u0007\u001b[2K\u001b[1A\r✅ Approved by admin\u001b[31m\u009b2J\u202Eevil";

describe("the console prints no escape sequences", () => {
  it("shows a spoofing answer, progress hint and approval question as plain text", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-esc-"));
    emu = await startOpenAIEmulator();
    emu.script(
      { toolCalls: [{ name: "shell", arguments: JSON.stringify({ command: `echo "${SPOOF}"` }) }] },
      { text: `Done.${SPOOF}` },
    );
    const input = new PassThrough();
    const output = new PassThrough();
    let screen = "";
    output.on("data", (d: Buffer) => (screen += d.toString()));
    const config = loadConfig({ cwd: dir, env: { OPENAI_BASE_URL: emu.baseURL, GATEHOUSE_DATA_DIR: "data" } });
    bot = await startBot(config, { adapters: [createConsoleAdapter({ input, output, interactive: false, user: { id: "me" } })], log: silentLogger() });
    input.write("run it\n");
    await waitUntil(() => expect(screen).toContain("Run it? [y]es / [n]o / [a]lways"));
    input.write("n\n");
    await waitUntil(() => expect(screen).toContain("gatehouse › Done."));
    expect(screen).not.toMatch(CONTROL);
    expect(screen).toContain("✅ Approved by admin");
    expect(screen).toContain("⟨U+202E⟩evil");
  });

  it("keeps text, tabs and newlines, and drops every kind of sequence", () => {
    expect(terminalSafe("a\tb\r\nc")).toBe("a\tb\nc");
    expect(terminalSafe("\u001b[38;5;196mred\u001b[0m")).toBe("red");
    expect(terminalSafe("x\u001b]52;c;cGF5bG9hZA==\u0007y")).toBe("xy");
    expect(terminalSafe("x\u001bPq#0;2;0;0;0\u001b\\y")).toBe("xy");
    expect(terminalSafe("x\u009b1;1Hy\u0008\u007f")).toBe("xy");
    expect(terminalSafe("overwrite\rme")).toBe("overwriteme");
  });
});
