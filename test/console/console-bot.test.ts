import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { createConsoleAdapter } from "../../adapters/console/console-adapter.ts";
import { loadConfig } from "../../src/config/load.ts";
import { startBot, type Bot } from "../../src/main.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { waitUntil } from "../support/wait.ts";

interface Terminal {
  bot: Bot;
  type(line: string): void;
  screen(): string;
}

let emu: OpenAIEmulator;
let dir: string;
const bots: Bot[] = [];

async function openTerminal(options: { interactive?: boolean; onInputEnd?: () => void } = {}): Promise<Terminal & { end(): void }> {
  const input = new PassThrough();
  const output = new PassThrough();
  let screen = "";
  output.on("data", (d: Buffer) => (screen += d.toString()));
  const config = loadConfig({ cwd: dir, env: { OPENAI_BASE_URL: emu.baseURL, GATEHOUSE_DATA_DIR: "data" } });
  const adapter = createConsoleAdapter({ input, output, interactive: options.interactive ?? false, onInputEnd: options.onInputEnd, user: { id: "me", name: "Me" } });
  const bot = await startBot(config, { adapters: [adapter], log: silentLogger() });
  bots.push(bot);
  return { bot, type: (line) => input.write(`${line}\n`), screen: () => screen, end: () => input.end() };
}

afterEach(async () => {
  for (const b of bots.splice(0)) await b.stop();
  await emu?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the console channel", () => {
  it("answers, runs a tool with progress lines, and asks before running shell", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    emu.script(
      { toolCalls: [{ name: "current_time", arguments: "{}" }] },
      { text: "It is time." },
      { toolCalls: [{ name: "shell", arguments: '{"command":"echo hello > out.txt"}' }] },
      { text: "I wrote out.txt." },
    );
    const t = await openTerminal();
    t.type("what time is it?");
    await waitUntil(() => expect(t.screen()).toContain("gatehouse › It is time."));
    expect(t.screen()).toMatch(/⏳ current_time[\s\S]*✅ current_time \(\d+\.\ds\)[\s\S]*It is time\./);
    t.type("write hello to out.txt");
    await waitUntil(() => expect(t.screen()).toContain("Run it? [y]es / [n]o / [a]lways"));
    expect(t.screen()).toContain("🔐 Approval needed: shell");
    expect(t.screen()).toContain('{"command":"echo hello > out.txt"}');
    t.type("y");
    await waitUntil(() => expect(t.screen()).toContain("gatehouse › I wrote out.txt."));
    expect(readFileSync(path.join(dir, "data", "workspace", "out.txt"), "utf8")).toBe("hello\n");
  });

  it("points to /help at the start, and /help says approvals are asked at the prompt", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    const t = await openTerminal();
    await waitUntil(() => expect(t.screen()).toContain("/help lists the commands"));
    t.type("/help");
    await waitUntil(() => expect(t.screen()).toContain("/help — this list"));
    expect(t.screen()).toContain("Before a risky step runs I ask here: y yes, n no, a always.");
    expect(t.screen()).toContain("/compact — ");
    expect(emu.requests).toHaveLength(0);
  });

  it("does not run shell when the person answers no", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    emu.script({ toolCalls: [{ name: "shell", arguments: '{"command":"touch nope"}' }] }, { text: "OK, I did not." });
    const t = await openTerminal();
    t.type("touch nope");
    await waitUntil(() => expect(t.screen()).toContain("Run it?"));
    t.type("n");
    await waitUntil(() => expect(t.screen()).toContain("OK, I did not."));
    const toolResult = (emu.requests[1]!.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === "tool");
    expect(toolResult!.content).toMatch(/denied by Me \(me\)/);
  });

  it("tells the model the reason typed after n", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    emu.script({ toolCalls: [{ name: "shell", arguments: '{"command":"touch nope"}' }] }, { text: "OK, not today." });
    const t = await openTerminal();
    t.type("touch nope");
    await waitUntil(() => expect(t.screen()).toContain("(n <reason> says why)"));
    t.type("n   the disk is full  ");
    await waitUntil(() => expect(t.screen()).toContain("OK, not today."));
    const toolResult = (emu.requests[1]!.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === "tool");
    expect(toolResult!.content).toBe("shell was not run: denied by Me (me): the disk is full");
  });

  it("keeps the conversation across a restart", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    emu.script({ text: "Nice to meet you, Ada." }, { text: "You are Ada." });
    const first = await openTerminal();
    first.type("my name is Ada");
    await waitUntil(() => expect(first.screen()).toContain("Nice to meet you, Ada."));
    await first.bot.stop();
    const second = await openTerminal();
    second.type("what is my name?");
    await waitUntil(() => expect(second.screen()).toContain("You are Ada."));
    const contents = (emu.requests[1]!.body.messages as Array<{ content: string }>).map((m) => m.content);
    expect(contents).toEqual(expect.arrayContaining(["my name is Ada", "Nice to meet you, Ada.", "what is my name?"]));
  });

  it("asks an open approval question again after a restart, instead of taking the stop for a no", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    emu.script({ toolCalls: [{ name: "shell", arguments: '{"command":"echo once >> runs.txt"}' }] }, { text: "Appended to runs.txt." });
    const first = await openTerminal();
    first.type("append once to runs.txt");
    await waitUntil(() => expect(first.screen()).toContain("Run it? [y]es / [n]o / [a]lways"));
    await first.bot.stop();
    expect(first.screen()).not.toContain("was not run");
    const second = await openTerminal();
    await waitUntil(() => expect(second.screen()).toContain("Run it? [y]es / [n]o / [a]lways"));
    expect(second.screen()).toContain('{"command":"echo once >> runs.txt"}');
    second.type("y");
    await waitUntil(() => expect(second.screen()).toContain("gatehouse › Appended to runs.txt."));
    expect(readFileSync(path.join(dir, "data", "workspace", "runs.txt"), "utf8")).toBe("once\n");
    expect(emu.requests).toHaveLength(2);
  });

  it("keeps the question open when the person quits at the terminal, and asks it again at the next start", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    emu.script({ toolCalls: [{ name: "shell", arguments: '{"command":"echo once >> runs.txt"}' }] }, { text: "Appended to runs.txt." });
    let ended = false;
    const first = await openTerminal({ interactive: true, onInputEnd: () => (ended = true) });
    first.type("append once to runs.txt");
    await waitUntil(() => expect(first.screen()).toContain("Run it? [y]es / [n]o / [a]lways"));
    first.end(); // Ctrl-D
    await waitUntil(() => expect(ended).toBe(true));
    expect(first.screen()).toContain("the approval question stays open: it is asked again at the next start");
    // Nothing computes: the bot may stop (the turn stays parked in the store).
    await first.bot.gateway.lanes.settled();
    expect(first.bot.gateway.status()).toMatchObject({ runningTurns: 0, parkedTurns: 1 });
    await first.bot.stop();
    expect(first.screen()).not.toContain("was not run");
    const second = await openTerminal({ interactive: true });
    await waitUntil(() => expect(second.screen()).toContain("Run it? [y]es / [n]o / [a]lways"));
    second.type("y");
    await waitUntil(() => expect(second.screen()).toContain("gatehouse › Appended to runs.txt."));
    expect(readFileSync(path.join(dir, "data", "workspace", "runs.txt"), "utf8")).toBe("once\n");
  });

  it("counts an open question as no when piped input runs out, so a scripted session ends", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    emu.script({ toolCalls: [{ name: "shell", arguments: '{"command":"echo once >> runs.txt"}' }] }, { text: "Not appended." });
    let ended = false;
    const t = await openTerminal({ onInputEnd: () => (ended = true) });
    t.type("append once to runs.txt");
    await waitUntil(() => expect(t.screen()).toContain("Run it? [y]es / [n]o / [a]lways"));
    t.end();
    await waitUntil(() => expect(t.screen()).toContain("gatehouse › Not appended."));
    await waitUntil(() => expect(ended).toBe(true));
    expect(toolMessagesOf(emu.requests[1]!.body)[0]).toMatch(/^shell was not run: denied by Me/);
  });

  it("takes /status and /stop typed at an open question as commands: /stop ends the waiting task and nothing runs", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    emu.script({ toolCalls: [{ name: "shell", arguments: '{"command":"echo once >> runs.txt"}' }] }, { text: "Hello there." });
    const t = await openTerminal();
    t.type("append once to runs.txt");
    t.type("/status");
    t.type("/stop");
    t.type("hello");
    await waitUntil(() => expect(t.screen()).toContain("gatehouse › Hello there."));
    const screen = t.screen();
    expect(screen).toMatch(/Waiting \d+s for approval of shell[\s\S]*Run it\? \[y\]es[\s\S]*Stopping the task that waits for approval of shell[\s\S]*gatehouse › Stopped\.[\s\S]*you › hello/);
    expect(screen).not.toContain("Please answer y");
    expect(existsSync(path.join(dir, "data", "workspace", "runs.txt"))).toBe(false);
    // The model was asked twice: the first message, and "hello" (the stopped turn asked nothing more).
    expect(emu.requests).toHaveLength(2);
  });

  it("stops a running task on /stop and says so", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-console-"));
    emu = await startOpenAIEmulator();
    emu.script({ hang: true });
    const input = new PassThrough();
    const output = new PassThrough();
    let screen = "";
    output.on("data", (d: Buffer) => (screen += d.toString()));
    const config = loadConfig({ cwd: dir, env: { OPENAI_BASE_URL: emu.baseURL, GATEHOUSE_DATA_DIR: "data" } });
    const bot = await startBot(config, { adapters: [createConsoleAdapter({ input, output, interactive: true })], log: silentLogger() });
    bots.push(bot);
    input.write("think for a long time\n");
    await waitUntil(() => expect(emu.requests.length).toBe(1));
    input.write("/stop\n");
    await waitUntil(() => expect(screen).toContain("Stopping the current task"));
    await waitUntil(() => expect(screen).toContain("gatehouse › Stopped."));
  });
});

function toolMessagesOf(body: Record<string, unknown>): string[] {
  return (body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "tool").map((m) => m.content);
}
