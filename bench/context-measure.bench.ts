/**
 * Context budget benchmark: what measuring the prompt costs before each model request — a
 * 40-message history with tool results, the system prompt, the tool specs — as a share of the CPU
 * a whole turn takes (a tool call and an answer: two requests, each measured). Target ≤ 5 %.
 * The turn runs the real engine, store and model client against the OpenAI emulator, which runs in
 * a child process so its CPU is not counted. Measured for a model without a known tokenizer (the
 * estimate) and for an OpenAI model (gpt-tokenizer), each cold (nothing cached: the first request
 * after a restart), warm (a later turn in a running bot: its history comes from the SQLite store's
 * memory, the same messages as before, whose counts the meter keeps) and re-read (a later turn whose
 * history was read afresh, new objects found again by content: after another process wrote the
 * file, and on PostgreSQL).
 * Run with `npm run bench -- context`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { startOpenAIEmulator } from "../test/emulators/openai/index.ts";
import { createModelClient } from "../src/model/openai-client.ts";
import type { ChatMessage, ToolSpec } from "../src/model/types.ts";
import { openSqliteStore } from "../src/store/sqlite-store.ts";
import { builtinTools } from "../src/tools/builtin/index.ts";
import { HookRegistry } from "../src/policy/hooks.ts";
import { ApprovalConfigSchema, LoopConfigSchema, ToolPolicyConfigSchema } from "../src/policy/schema.ts";
import { createObserver } from "../src/observe/observer.ts";
import { silentLogger } from "../src/observe/logger.ts";
import { runTurn } from "../src/engine/turn.ts";
import { createMeter, meterFor, pruneToolResults, type PromptMeter } from "../src/engine/context-budget.ts";
import type { ResolvedExecution } from "../src/engine/types.ts";
import { parseEnvelope, sessionKeyOf } from "../src/envelope.ts";
import type { ApprovalManager } from "../src/approval/types.ts";

const TURNS = 40;
const MEASURES = 200;
const WORDS = "the deploy job failed at step four because the registry token expired and the retry used the old cache key".split(" ");

function prose(chars: number, seed: number): string {
  let text = "";
  for (let i = 0; text.length < chars; i++) text += `${i % 15 === 0 ? "\n" : " "}${WORDS[(i * 7 + seed) % WORDS.length]}${i % 11 === 0 ? ` ${seed * 1000 + i}` : ""}`;
  return text;
}

/** Ten turns of four messages: a question, a tool call, its result of `resultChars`, an answer. */
function history(resultChars: number): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (let t = 0; t < 10; t++) {
    const id = `call_${t}`;
    messages.push(
      { role: "user", content: `[Ann] ${prose(200, t)}` },
      { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path: `logs/run-${t}.txt` }) } }] },
      { role: "tool", tool_call_id: id, content: prose(resultChars, t + 100) },
      { role: "assistant", content: prose(400, t + 200) },
    );
  }
  return messages;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

/** What the fitter measures for one request: system and current turn, the history (its prune check), the tool specs. */
function measureOnce(meter: PromptMeter, system: ChatMessage, turn: ChatMessage[], past: ChatMessage[], specs: ToolSpec[]): number {
  const fixed = meter.messages([system, ...turn]);
  return pruneToolResults(past, fixed, Number.MAX_SAFE_INTEGER, meter).tokens + meter.tools(specs);
}

/**
 * The measuring of one turn: its history loaded afresh from the store (new objects, found again by
 * content), its first request, then its second with the tool call and result the turn added.
 */
function measureTurn(meter: PromptMeter, system: ChatMessage, past: ChatMessage[], specs: ToolSpec[], i: number): void {
  const question: ChatMessage = { role: "user", content: "what time is it?" };
  measureOnce(meter, system, [question], past, specs);
  const call: ChatMessage = { role: "assistant", content: null, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "current_time", arguments: "{}" } }] };
  const result: ChatMessage = { role: "tool", tool_call_id: `c${i}`, content: `2026-12-01T09:${String(i % 60).padStart(2, "0")}:00.000Z (UTC)` };
  measureOnce(meter, system, [question, call, result], past, specs);
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, [import.meta.filename, "--emulator"], { stdio: ["pipe", "pipe", "inherit"] });
  const baseURL = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once("line", resolve));
  const dir = mkdtempSync(path.join(tmpdir(), "gh-bench-context-"));
  try {
    process.stdout.write(`history: 40 messages (10 turns: question, tool call, result, answer); a turn = 2 model requests\n`);
    process.stdout.write(`${"model".padEnd(12)} ${"meter".padEnd(9)} ${"results".padStart(8)} ${"turn CPU".padStart(9)} ${"measure cold".padStart(13)} ${"warm".padStart(7)} ${"re-read".padStart(8)} ${"share cold".padStart(11)} ${"share warm".padStart(11)} ${"share re-read".padStart(14)}\n`);
    for (const resultChars of [3000, 16_000]) {
      for (const model of ["local-model", "gpt-4o"]) await run(baseURL, dir, model, resultChars);
    }
    process.stdout.write(`target: measuring ≤ 5 % of a turn's CPU\n`);
  } finally {
    child.stdin!.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function run(baseURL: string, dir: string, model: string, resultChars: number): Promise<void> {
  const log = silentLogger();
  const store = await openSqliteStore({ dataDir: path.join(dir, `${model}-${resultChars}`) });
  const workspace = path.join(dir, "workspace");
  const tools = builtinTools({ workspace });
  const approvals: ApprovalManager = { kind: "console", request: async () => ({ outcome: "denied", by: { id: "nobody" }, source: "console" }) };
  const exec: ResolvedExecution = {
    model: createModelClient({ baseURL, apiKey: "bench", model, toolProtocol: "native", timeoutMs: 10_000, maxRetries: 0, log }),
    catalog: () => tools,
    policy: { tools: ToolPolicyConfigSchema.parse({}), approval: ApprovalConfigSchema.parse({}), loop: LoopConfigSchema.parse({}) },
    hooks: new HookRegistry({ log }), approvals, store, observer: createObserver(log), log,
    knobs: {
      maxIterations: 10, maxToolResultChars: 16_000, spillToolResultChars: 200_000, parallelTools: false, duplicateExempt: [],
      excludedTools: [], spillDir: path.join(dir, "spill"), workspace, systemPrompt: "You are a bench bot.",
      // A window the history fits in, so that the turn measures every request and never prunes or compacts.
      contextTokens: 1_000_000,
    },
  };
  const past = history(resultChars);
  // Each turn reads its history from the store: new message objects with the same contents.
  const reloaded = () => structuredClone(past);
  const histories = Array.from({ length: TURNS }, reloaded);
  const turn = async (i: number) => {
    const envelope = parseEnvelope({
      id: `e${i}`, channel: "console", conversation: { id: "c1", kind: "dm" }, sender: { id: "U1", name: "Ann", isBot: false },
      mentioned: true, text: "what time is it?", replyTo: { channel: "console", conversationId: "c1" }, receivedAt: Date.now(),
      capabilities: { threads: false, inlineApproval: false, edit: false, typing: false, maxMessageChars: 4000 },
    });
    const outcome = await runTurn(exec, {
      turnId: `t${i}`, traceId: `trace${i}`, sessionKey: sessionKeyOf(envelope), envelope, history: histories[i % TURNS] ?? reloaded(),
      signal: new AbortController().signal, emit: () => {},
    });
    if (outcome.status !== "done") throw new Error(`bench turn ended ${outcome.status}: ${"text" in outcome ? outcome.text : ""}`);
  };
  for (let i = 0; i < 5; i++) await turn(1000 + i);
  const turnStart = process.cpuUsage();
  for (let i = 0; i < TURNS; i++) await turn(i);
  const turnMs = cpuMs(turnStart) / TURNS;

  const system: ChatMessage = { role: "system", content: exec.knobs.systemPrompt };
  const specs: ToolSpec[] = tools.map((t) => ({ name: t.name, description: t.description, parameters: {} }));
  // Cold: the first turn after a restart counts every message; warm: every later turn (counts cached by content).
  const fresh = await Promise.all(Array.from({ length: MEASURES }, () => createMeter(model)));
  const coldHistories = Array.from({ length: MEASURES }, reloaded);
  const coldStart = process.cpuUsage();
  fresh.forEach((meter, i) => measureTurn(meter, system, coldHistories[i]!, specs, i));
  const coldMs = cpuMs(coldStart) / MEASURES;
  const warm = await meterFor(model);
  await store.appendHistory("bench:held", past);
  const heldHistories = await Promise.all(Array.from({ length: MEASURES }, () => store.loadHistory("bench:held", 1000)));
  measureTurn(warm, system, heldHistories[0]!, specs, 0);
  const warmStart = process.cpuUsage();
  heldHistories.forEach((h, i) => measureTurn(warm, system, h, specs, i));
  const warmMs = cpuMs(warmStart) / MEASURES;
  const rereadHistories = Array.from({ length: MEASURES }, reloaded);
  const rereadStart = process.cpuUsage();
  rereadHistories.forEach((h, i) => measureTurn(warm, system, h, specs, i));
  const rereadMs = cpuMs(rereadStart) / MEASURES;
  const pct = (ms: number) => `${((ms / turnMs) * 100).toFixed(1)} %`;
  process.stdout.write(
    `${model.padEnd(12)} ${(warm.exact ? "tokenizer" : "estimate").padEnd(9)} ${`${resultChars / 1000}K`.padStart(8)} ${`${turnMs.toFixed(2)} ms`.padStart(9)} ` +
      `${`${coldMs.toFixed(3)} ms`.padStart(13)} ${`${warmMs.toFixed(3)}`.padStart(7)} ${`${rereadMs.toFixed(3)}`.padStart(8)} ${pct(coldMs).padStart(11)} ${pct(warmMs).padStart(11)} ${pct(rereadMs).padStart(14)}\n`,
  );
  await store.close();
}

if (process.argv[2] === "--emulator") {
  // The child: the model answers a tool result with text, anything else with one current_time call.
  const emu = await startOpenAIEmulator();
  emu.setFallback((r) => {
    const msgs = r.body.messages as Array<{ role: string }>;
    return msgs.at(-1)?.role === "tool" ? { text: "It is morning." } : { toolCalls: [{ name: "current_time", arguments: "{}" }] };
  });
  process.stdout.write(`${emu.baseURL}\n`);
  process.stdin.resume();
  process.stdin.on("end", () => void emu.close().then(() => process.exit(0)));
} else {
  await main();
}
