/**
 * The gate's own cost: one turn with CALLS tool calls (one per model reply, then the final answer)
 * run through the full engine — `runTurn` (src/engine/turn.ts) with a ResolvedExecution built as the
 * composition root builds it: config from loadConfig (defaults), the real SQLite store in a temp
 * folder, HookRegistry with the config's hooks, the observer over the pino logger (with redaction and
 * the secret scrubber) writing to the rotating log file through the line batcher, as src/main.ts
 * composes it, receipts signed and stored — against the same
 * turn through a bare loop: the same model client (src/model/openai-client.ts) against the same
 * OpenAI emulator, offering the same tool specs, calling the same tool's `execute` directly and
 * appending messages. Both run in this process, one turn at a time, in alternating rounds. What is
 * timed is the turn: the engine's starts from the envelope and turn state the gateway hands it.
 *
 * Contenders per round: `engine` (as above), `engine-lean` (receipts off, logger silent: what of the
 * cost is receipts and logging), `bare`; a round runs their turns interleaved one by one. Tools: `probe` (a cheap tool, like test/engine/fixture.ts's)
 * and `current_time` (the built-in, a different time zone per call so the loop detector has no reason
 * to step in). Figures: the median over the rounds of each round's median wall time per turn, and
 * of CPU per turn (this process, so the emulator's share is in both and the same).
 *
 * Run: `npm run bench -- gate-cost` (or `node bench/gate-cost.bench.ts`). Knobs: BENCH_ROUNDS (7),
 * BENCH_TURNS (30 per round), BENCH_CALLS (10), BENCH_TOOLS ("probe,current_time"), BENCH_LOG_LEVEL
 * (info, the default level). Exit code 0 whatever the figures; 1 when the bench itself broke.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { startOpenAIEmulator, type RecordedRequest, type Step } from "../test/emulators/openai/index.ts";
import { configSecrets, loadConfig } from "../src/config/load.ts";
import { createModelClient } from "../src/model/openai-client.ts";
import type { ChatMessage, ModelClient, ToolSpec } from "../src/model/types.ts";
import { openSqliteStore } from "../src/store/sqlite-store.ts";
import type { Store } from "../src/store/store.ts";
import { builtinTools } from "../src/tools/builtin/index.ts";
import type { AnyTool, ToolContext } from "../src/tools/tool.ts";
import { HookRegistry, registerConfigHooks } from "../src/policy/hooks.ts";
import { createObserver } from "../src/observe/observer.ts";
import { createLogger, silentLogger } from "../src/observe/logger.ts";
import { openRotatingLog } from "../src/observe/log-files.ts";
import { batchedLog } from "../src/observe/log-batch.ts";
import { createReceiptSigner } from "../src/observe/receipt-signer.ts";
import { runTurn } from "../src/engine/turn.ts";
import type { ResolvedExecution, TurnState } from "../src/engine/types.ts";
import type { ApprovalManager } from "../src/approval/types.ts";
import { parseEnvelope, sessionKeyOf } from "../src/envelope.ts";
import { DEFAULT_SYSTEM_PROMPT } from "../src/main.ts";
import { cleanupAll, makeTempDir } from "./support/processes.ts";
import { fmt, median, renderTable } from "./support/stats.ts";

const ROUNDS = Math.max(5, Number(process.env.BENCH_ROUNDS ?? 7));
const TURNS = Math.max(1, Number(process.env.BENCH_TURNS ?? 30));
const CALLS = Math.max(1, Number(process.env.BENCH_CALLS ?? 10));
const TOOLS = (process.env.BENCH_TOOLS ?? "probe,current_time").split(",").map((s) => s.trim()).filter(Boolean);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? "info";
const TARGET = 1.15;
const TEXT = "please run the checks";
const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "Europe/London", "America/Los_Angeles", "Asia/Kolkata", "Africa/Cairo", "America/Sao_Paulo", "Pacific/Auckland", "Asia/Singapore"];

const out = (line = "") => process.stdout.write(`${line}\n`);
const startedAt = Date.now();
const watchdog = setTimeout(() => {
  process.stderr.write("gate-cost: still running after 170 s; giving up\n");
  cleanupAll();
  process.exit(1);
}, 170_000);
watchdog.unref();

/** A cheap tool, as test/engine/fixture.ts's probe: echoes its value. */
const probeTool: AnyTool = {
  name: "probe",
  description: "Checks one item and reports on it.",
  parameters: z.looseObject({ value: z.string().optional() }),
  risk: "read",
  owner: "builtin",
  hint: (args: { value?: string }) => String(args.value ?? ""),
  async execute(args: { value?: string }) {
    return { success: true, output: `probe:${String(args.value ?? "")}` };
  },
};

const argsFor = (tool: string, n: number) => (tool === "current_time" ? { timezone: ZONES[n % ZONES.length] } : { value: `item-${n}` });

/** The model: CALLS tool calls, one per reply, then the answer (counted from the tool results it was sent). */
let activeTool = "probe";
function gateModel(request: RecordedRequest): Step {
  const messages = (request.body.messages ?? []) as Array<{ role?: string }>;
  const done = messages.filter((m) => m.role === "tool").length;
  if (done < CALLS) return { toolCalls: [{ name: activeTool, arguments: JSON.stringify(argsFor(activeTool, done)) }] };
  return { text: `All ${done} checks are done.` };
}

const emu = await startOpenAIEmulator();
emu.setFallback(gateModel);
const dir = makeTempDir("gh-bench-gate-");

interface Setup {
  exec: ResolvedExecution;
  store: Store;
}

async function engineSetup(name: string, lean: boolean): Promise<Setup> {
  const root = path.join(dir, name);
  mkdirSync(root, { recursive: true });
  const config = loadConfig({ cwd: root, env: { OPENAI_BASE_URL: emu.baseURL, OPENAI_API_KEY: "bench-key-0123456789", GATEHOUSE_DATA_DIR: "data" } });
  config.receipts.enabled = !lean;
  // The "standard" profile names the built-ins only; "full" offers the probe too (and nothing else:
  // shell stays behind tools.elevated, as by default).
  config.tools.profile = "full";
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  mkdirSync(config.workspace!, { recursive: true });
  const log = lean
    ? silentLogger()
    : createLogger({ level: LOG_LEVEL, secrets: configSecrets(config), destinations: [batchedLog([openRotatingLog(config.dataDir)])] });
  const observer = createObserver(log);
  const store = await openSqliteStore({ dataDir: config.dataDir });
  const hooks = new HookRegistry({ log });
  registerConfigHooks(hooks, config.hooks);
  const tools = [...builtinTools({ workspace: config.workspace!, http: config.http, shell: config.shell }), probeTool];
  const model = createModelClient({
    baseURL: config.model.baseURL, apiKey: config.model.apiKey ?? "not-needed", model: config.model.name,
    toolProtocol: config.model.toolProtocol, timeoutMs: config.model.timeoutMs, maxRetries: config.model.maxRetries, log,
  });
  // Every call here is a read: nobody is asked. Were one asked, it is denied (and the bench says so).
  const approvals: ApprovalManager = { kind: "non-interactive", request: async () => ({ outcome: "unavailable", source: "non-interactive", reason: "bench" }) };
  const exec: ResolvedExecution = {
    model, catalog: () => tools, hooks, store, observer, log, receipts: config.receipts.enabled ? createReceiptSigner(config) : undefined,
    policy: { tools: config.tools, approval: config.approval, loop: config.loop }, approvals,
    knobs: {
      // The default cap (10) would end a 10-call turn with a summary request; the loop is what is measured.
      maxIterations: Math.max(config.engine.maxIterations, CALLS + 2), maxToolResultChars: config.engine.maxToolResultChars,
      spillToolResultChars: config.engine.spillToolResultChars, parallelTools: config.engine.parallelTools,
      duplicateExempt: config.engine.duplicateExempt, excludedTools: [], spillDir: path.join(config.dataDir, "spill"),
      workspace: config.workspace!, systemPrompt: config.model.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
    },
  };
  return { exec, store };
}

let turnNo = 0;
/**
 * One engine turn, in two parts: the message's envelope and turn state (what the adapter and the
 * gateway hand the engine), then the turn itself, which is what is timed.
 */
function engineTurn(setup: Setup): () => Promise<string> {
  const n = ++turnNo;
  const envelope = parseEnvelope({
    id: `u${n}`, channel: "telegram", conversation: { id: String(500_000 + n), kind: "dm" },
    sender: { id: String(500_000 + n), name: "Ann", isBot: false }, mentioned: true, text: TEXT,
    replyTo: { channel: "telegram", conversationId: String(500_000 + n), replyToMessageId: "1" }, receivedAt: Date.now(),
    capabilities: { threads: true, inlineApproval: true, edit: true, typing: true, maxMessageChars: 4096, maxButtonPayloadBytes: 64 },
  });
  const state: TurnState = {
    turnId: `t${n}`, traceId: `trace${n}`, sessionKey: sessionKeyOf(envelope), envelope, history: [],
    signal: new AbortController().signal, emit: () => {},
  };
  return async () => {
    const result = await runTurn(setup.exec, state);
    if (result.status !== "done") throw new Error(`engine turn ended ${result.status}${"text" in result ? `: ${result.text}` : ""}`);
    return result.text;
  };
}

/** The bare loop: same client, same specs, the tool's execute called directly. */
function bareLoop(model: ModelClient, specs: ToolSpec[], tools: Map<string, AnyTool>, workspace: string) {
  const log = silentLogger();
  return () => async (): Promise<string> => {
    const n = ++turnNo;
    const ctx: ToolContext = { signal: new AbortController().signal, workspace, sessionKey: `telegram:${500_000 + n}`, senderId: String(500_000 + n), log };
    const messages: ChatMessage[] = [{ role: "system", content: DEFAULT_SYSTEM_PROMPT }, { role: "user", content: TEXT }];
    for (let i = 0; i < CALLS + 2; i++) {
      const reply = await model.complete({ messages, tools: specs, signal: ctx.signal });
      if (reply.toolCalls.length === 0) return reply.text;
      messages.push({
        role: "assistant", content: reply.text.trim() === "" ? null : reply.text,
        tool_calls: reply.toolCalls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } })),
      });
      for (const call of reply.toolCalls) {
        const tool = tools.get(call.name);
        let content: string;
        if (!tool) content = `Error: unknown tool ${call.name}`;
        else {
          const result = await tool.execute(JSON.parse(call.arguments || "{}"), ctx);
          content = result.success ? result.output : `Error: ${result.error ?? "failed"}`;
        }
        messages.push({ role: "tool", tool_call_id: call.id, content });
      }
    }
    throw new Error("bare loop: no final answer");
  };
}

type Contender = "engine" | "engine-lean" | "bare";
interface RoundFigures {
  medianMs: number;
  cpuMsPerTurn: number;
  requestsPerTurn: number;
}

/** Per contender: a round's turns, each timed on its own. */
type Samples = { ms: number[]; cpuMs: number[]; requests: number };

/** A turn to time: called untimed, it gives the timed part. */
type Turn = () => () => Promise<string>;

async function timedTurn(turn: Turn, into: Samples): Promise<void> {
  const run = turn();
  const before = emu.requests.length;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const text = await run();
  into.ms.push(performance.now() - t0);
  const cpu = process.cpuUsage(cpu0);
  into.cpuMs.push((cpu.user + cpu.system) / 1000);
  into.requests += emu.requests.length - before;
  if (!text.startsWith(`All ${CALLS} checks`)) throw new Error(`unexpected answer: ${text.slice(0, 120)}`);
}

/**
 * One round: `turns` turns of each contender, interleaved turn by turn in `order`, so that a
 * change in the machine's load while the round runs falls on every contender alike.
 */
async function round(runs: Partial<Record<Contender, Turn>>, order: Contender[], turns: number): Promise<Partial<Record<Contender, RoundFigures>>> {
  const samples = new Map<Contender, Samples>(order.map((c) => [c, { ms: [], cpuMs: [], requests: 0 }]));
  for (let i = 0; i < turns; i++) {
    for (const c of order) await timedTurn(runs[c]!, samples.get(c)!);
    // The emulator keeps every request body; drop them so that its memory does not grow turn by turn.
    emu.requests.length = 0;
  }
  const out: Partial<Record<Contender, RoundFigures>> = {};
  for (const [c, s] of samples) out[c] = { medianMs: median(s.ms), cpuMsPerTurn: median(s.cpuMs), requestsPerTurn: s.requests / turns };
  return out;
}

const rows: string[][] = [];
const notes: string[] = [];
const setups: Setup[] = [];
try {
  const full = await engineSetup("engine", false);
  const lean = await engineSetup("engine-lean", true);
  setups.push(full, lean);
  for (const tool of TOOLS) {
    activeTool = tool;
    // Warm-up (not counted); the engine's first request tells the bare loop which specs to offer.
    emu.requests.length = 0;
    await engineTurn(full)();
    const offered = emu.requests[0]?.body.tools as Array<{ function: { name: string; description: string; parameters: Record<string, unknown> } }> | undefined;
    if (!offered?.some((t) => t.function.name === tool)) throw new Error(`the engine did not offer ${tool}: ${JSON.stringify(offered?.map((t) => t.function.name))}`);
    const specs: ToolSpec[] = offered.map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters }));
    const byName = new Map(full.exec.catalog().map((t) => [t.name, t] as const));
    const bare = bareLoop(full.exec.model, specs, byName, full.exec.knobs.workspace);
    const runs: Record<Contender, Turn> = { engine: () => engineTurn(full), "engine-lean": () => engineTurn(lean), bare };
    await round(runs, ["engine", "engine-lean", "bare"], 5);

    const figures: Record<Contender, RoundFigures[]> = { engine: [], "engine-lean": [], bare: [] };
    // Both cyclic orders, alternating: each contender follows each other one (and whatever work the
    // previous turn left running) about equally often.
    const orders: Contender[][] = [["engine", "bare", "engine-lean"], ["bare", "engine", "engine-lean"]];
    for (let r = 0; r < ROUNDS; r++) {
      const figured = await round(runs, orders[r % orders.length]!, TURNS);
      for (const c of orders[r % orders.length]!) figures[c].push(figured[c]!);
    }
    const med = (c: Contender, pick: (f: RoundFigures) => number) => median(figures[c].map(pick));
    const bareMs = med("bare", (f) => f.medianMs);
    const bareCpu = med("bare", (f) => f.cpuMsPerTurn);
    for (const c of ["engine", "engine-lean"] as const) {
      const ms = med(c, (f) => f.medianMs);
      const cpu = med(c, (f) => f.cpuMsPerTurn);
      const label = c === "engine" ? "engine (receipts, log file)" : "engine (no receipts, silent log)";
      rows.push([tool, label, "wall ms / turn", fmt(ms, 2), fmt(bareMs, 2), `${(ms / bareMs).toFixed(2)}×`, c === "engine" ? `≤ ${TARGET}×` : "", c === "engine" ? (ms / bareMs <= TARGET ? "PASS" : "FAIL") : ""]);
      rows.push([tool, label, "CPU ms / turn", fmt(cpu, 2), fmt(bareCpu, 2), `${(cpu / bareCpu).toFixed(2)}×`, "", ""]);
    }
    const perCall = (med("engine", (f) => f.medianMs) - bareMs) / CALLS;
    rows.push([tool, "engine − bare", "wall ms / tool call", fmt(perCall, 3), "", "", "", ""]);
    for (const c of ["engine", "engine-lean", "bare"] as const) {
      const req = med(c, (f) => f.requestsPerTurn);
      if (req !== CALLS + 1) notes.push(`${tool}/${c}: ${req} model requests per turn, expected ${CALLS + 1}`);
    }
  }
} catch (error) {
  process.stderr.write(`gate-cost: ${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  for (const s of setups) await s.store.close();
}

out(`\nGate cost: one turn with ${CALLS} tool calls (one per model reply) + the answer, full engine vs bare loop`);
out(`(${ROUNDS} alternating rounds of ${TURNS} turns each; median over the rounds of each round's median; log level ${LOG_LEVEL})`);
out(renderTable(["tool", "contender", "metric", "engine", "bare loop", "ratio", "target", "verdict"], rows));
if (notes.length) {
  out(`\nnotes:`);
  for (const n of notes) out(`  - ${n}`);
}
out(`\ntotal time ${Math.round((Date.now() - startedAt) / 1000)} s`);
clearTimeout(watchdog);
await emu.close();
cleanupAll();
