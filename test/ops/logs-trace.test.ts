import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { loadConfig } from "../../src/config/load.ts";
import { startBot, type Bot } from "../../src/main.ts";
import { parseEnvelope } from "../../src/envelope.ts";
import type { ChannelAdapter, InboundSink, OutboundText } from "../../src/ports.ts";
import { runCli } from "./cli-run.ts";

/** A channel with no platform behind it: it records what the bot sends. */
function recordingAdapter() {
  const sent: OutboundText[] = [];
  let sink: InboundSink | undefined;
  const adapter: ChannelAdapter = {
    channel: "test",
    capabilities: { threads: true, inlineApproval: false, edit: false, typing: false, maxMessageChars: 4000, maxButtonPayloadBytes: 64 },
    pacing: { minIntervalMs: 0 },
    port: {
      async send(_target, message) {
        sent.push(message);
        return { id: String(sent.length) };
      },
    },
    async start(s) {
      sink = s;
    },
    async stop() {},
  };
  return { adapter, sent, sink: () => sink! };
}

let dataDir: string;
let emulator: OpenAIEmulator | undefined;
let bot: Bot | undefined;

afterEach(async () => {
  await bot?.stop();
  await emulator?.close();
  bot = undefined;
  emulator = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

describe("gatehouse logs --trace", () => {
  it("shows every step of a turn whose shell call the policy refused (at LOG_LEVEL=debug)", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-trace-"));
    emulator = await startOpenAIEmulator();
    emulator.script(
      { toolCalls: [{ name: "shell", arguments: JSON.stringify({ command: "rm -rf /" }) }] },
      { text: "I may not run shell commands here." },
    );
    const config = loadConfig({ env: { OPENAI_BASE_URL: emulator.baseURL, GATEHOUSE_DATA_DIR: dataDir, LOG_LEVEL: "debug" }, cwd: dataDir });
    const channel = recordingAdapter();
    bot = await startBot(config, { adapters: [channel.adapter] });
    let traceId = "";
    bot.observer.listen((e) => {
      if (e.event === "envelope.received") traceId = e.traceId!;
    });
    const finished = new Promise<void>((resolve) => bot!.observer.listen((e) => e.event === "reply.delivered" && resolve()));

    await channel.sink().message(
      parseEnvelope({
        id: "m1", channel: "test", conversation: { id: "C1", kind: "dm" }, sender: { id: "U1", name: "Ursula", isBot: false },
        mentioned: true, text: "please wipe the disk", replyTo: { channel: "test", conversationId: "C1" }, receivedAt: Date.now(),
        capabilities: channel.adapter.capabilities,
      }),
    );
    await finished;
    await bot.stop();
    bot = undefined;
    expect(channel.sent.at(-1)?.text).toBe("I may not run shell commands here.");

    const result = await runCli(["logs", "--trace", traceId], { GATEHOUSE_DATA_DIR: dataDir });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^Trace ${traceId} \\(session test:C1\\): \\d+ lines`));
    const story = lines.slice(1);
    for (const line of story) expect(line).toContain(traceId);
    const events = story.map((l) => l.split(traceId)[1]!.trim().split(/\s+/)[0]);
    const order = ["envelope.received", "lane.queued", "turn.start", "model.request", "policy.refused", "model.request", "turn.finish", "reply.delivered"];
    expect(events.filter((e) => order.includes(e!))).toEqual(order);
    const refused = story.find((l) => l.includes("policy.refused"))!;
    expect(refused).toContain("tool=shell");
    expect(refused).toContain("rule=");
    expect(story.find((l) => l.includes("envelope.received"))).toContain("sender=U1");
    expect(story.find((l) => l.includes("turn.finish"))).toContain("status=done");

    // The session's view holds the same turn, lines that carry only the trace id included.
    const session = await runCli(["logs", "--session", "test:C1"], { GATEHOUSE_DATA_DIR: dataDir });
    expect(session.stdout.split("\n").filter((l) => l.includes("model.request"))).toHaveLength(2);
    expect(session.stdout).not.toContain("channel started");
  });

  it("says so, and exits 1, when no line carries the trace id", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-trace-"));
    const { openRotatingLog } = await import("../../src/observe/log-files.ts");
    openRotatingLog(dataDir).write(`${JSON.stringify({ level: 30, time: new Date().toISOString(), traceId: "aaaa", event: "turn.start", msg: "turn.start" })}\n`);
    const result = await runCli(["logs", "--trace", "bbbb"], { GATEHOUSE_DATA_DIR: dataDir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("No log lines carry trace id bbbb.");
  });
});
