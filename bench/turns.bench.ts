/**
 * Turn engine benchmark: the whole gateway path — envelope, dedupe, lane, model request to the
 * local OpenAI-compatible emulator, one tool call, result, answer delivered — for many sessions
 * at once. Prints turns per second, latency percentiles and memory before and after.
 * Run with `npm run bench -- turns`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startOpenAIEmulator } from "../test/emulators/openai/index.ts";
import { loadConfig } from "../src/config/load.ts";
import { startBot } from "../src/main.ts";
import { silentLogger } from "../src/observe/logger.ts";
import type { ChannelAdapter, InboundSink } from "../src/ports.ts";
import { parseEnvelope } from "../src/envelope.ts";

const TURNS = 400;
const SESSIONS = 40;

const emu = await startOpenAIEmulator();
emu.setFallback((req) => {
  const msgs = req.body.messages as Array<{ role: string }>;
  return msgs[msgs.length - 1]!.role === "tool" ? { text: "done" } : { toolCalls: [{ name: "current_time", arguments: "{}" }] };
});

const dir = mkdtempSync(path.join(tmpdir(), "gh-bench-"));
const answered = new Map<string, () => void>();
let sink: InboundSink | undefined;
const adapter: ChannelAdapter = {
  channel: "bench",
  capabilities: { threads: true, inlineApproval: false, edit: false, typing: false, maxMessageChars: 4000, maxButtonPayloadBytes: 64 },
  pacing: { minIntervalMs: 0 },
  port: {
    async send(target, m) {
      if (m.kind === "reply") answered.get(target.threadId!)?.();
      return { id: "1" };
    },
  },
  async start(s) {
    sink = s;
  },
  async stop() {},
};

const config = loadConfig({ cwd: dir, env: { OPENAI_BASE_URL: emu.baseURL, GATEHOUSE_DATA_DIR: "data" } });
config.gateway.maxConcurrentTurns = 16;
const bot = await startBot(config, { adapters: [adapter], log: silentLogger() });

const mem = () => `${Math.round(process.memoryUsage().rss / 1e6)} MB rss, ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB heap`;
(globalThis as { gc?: () => void }).gc?.();
process.stdout.write(`before: ${mem()}\n`);

const latencies: number[] = [];
const start = performance.now();
await Promise.all(
  Array.from({ length: TURNS }, async (_, i) => {
    const thread = `t${i}`;
    const t0 = performance.now();
    const done = new Promise<void>((resolve) => answered.set(thread, resolve));
    await sink!.message(
      parseEnvelope({
        id: `m${i}`, channel: "bench", conversation: { id: `c${i % SESSIONS}`, threadId: thread, kind: "channel" },
        sender: { id: "U1", isBot: false }, mentioned: true, text: "what time is it?",
        replyTo: { channel: "bench", conversationId: `c${i % SESSIONS}`, threadId: thread }, receivedAt: Date.now(),
        capabilities: adapter.capabilities,
      }),
    );
    await done;
    latencies.push(performance.now() - t0);
  }),
);
const seconds = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(0);
process.stdout.write(`${TURNS} turns (2 model requests + 1 tool call each) in ${seconds.toFixed(2)} s: ${(TURNS / seconds).toFixed(1)} turns/s\n`);
process.stdout.write(`latency p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms, max ${pct(1)} ms (16 turns at once)\n`);
(globalThis as { gc?: () => void }).gc?.();
process.stdout.write(`after:  ${mem()}\n`);
await bot.stop();
await emu.close();
rmSync(dir, { recursive: true, force: true });
