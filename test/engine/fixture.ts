/**
 * A turn-engine fixture: the real model client against the OpenAI emulator, the real SQLite
 * store in a temp folder, the real tools and gate, and a scripted approval manager that stands
 * for a person answering.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { createModelClient } from "../../src/model/openai-client.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import type { Store } from "../../src/store/store.ts";
import { builtinTools } from "../../src/tools/builtin/index.ts";
import type { AnyTool } from "../../src/tools/tool.ts";
import { HookRegistry } from "../../src/policy/hooks.ts";
import { ApprovalConfigSchema, LoopConfigSchema, ToolPolicyConfigSchema } from "../../src/policy/schema.ts";
import { createObserver, type ObserverEvent } from "../../src/observe/observer.ts";
import { createLogger } from "../../src/observe/logger.ts";
import { runTurn } from "../../src/engine/turn.ts";
import type { ResolvedExecution, TurnEvent, TurnOutcome, TurnState } from "../../src/engine/types.ts";
import type { ApprovalDecision, ApprovalManager, ApprovalRequest } from "../../src/approval/types.ts";
import { parseEnvelope, sessionKeyOf, type IngressEnvelopeInput } from "../../src/envelope.ts";

/** An approval manager answering from a script, recording every request (a person at the keyboard). */
export class ScriptedApprovals implements ApprovalManager {
  readonly kind = "console";
  readonly requests: ApprovalRequest[] = [];
  answers: Array<ApprovalDecision["outcome"]> = [];
  async request(req: ApprovalRequest): Promise<ApprovalDecision> {
    this.requests.push(req);
    const outcome = this.answers.shift() ?? "denied";
    return { outcome, by: { id: "U-boss", name: "Boss" }, source: "console" };
  }
}

/** A tool that records its calls; optional delay, output and failure. */
export function probeTool(name: string, options: { delayMs?: number; output?: (args: Record<string, unknown>) => string; throws?: string; risk?: "read" | "write" | "exec" } = {}) {
  const calls: Array<Record<string, unknown>> = [];
  const tool: AnyTool = {
    name,
    description: `test tool ${name}`,
    parameters: z.looseObject({ value: z.string().optional() }),
    risk: options.risk ?? "read",
    owner: "builtin",
    hint: (args: Record<string, unknown>) => String(args.value ?? ""),
    async execute(args: Record<string, unknown>, ctx) {
      calls.push(args);
      if (options.delayMs) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, options.delayMs);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(t);
            reject(new Error("aborted"));
          });
        });
      }
      if (options.throws) throw new Error(options.throws);
      return { success: true, output: options.output ? options.output(args) : `${name}:${String(args.value ?? "")}` };
    },
  };
  return { tool, calls };
}

export interface EngineFixture {
  emu: OpenAIEmulator;
  store: Store;
  exec: ResolvedExecution;
  approvals: ScriptedApprovals;
  hooks: HookRegistry;
  events: ObserverEvent[];
  logLines: string[];
  dir: string;
  /** Runs one turn for `text` from a sender, returning the outcome and the turn events. */
  turn(text: string, opts?: { sender?: string; channel?: string; signal?: AbortSignal; kind?: "dm" | "group"; origin?: IngressEnvelopeInput["origin"] }): Promise<{ outcome: TurnOutcome; turnEvents: TurnEvent[] }>;
  close(): Promise<void>;
}

export interface FixtureOptions {
  tools?: AnyTool[];
  policy?: Record<string, unknown>;
  approval?: Record<string, unknown>;
  loop?: Record<string, unknown>;
  knobs?: Partial<ResolvedExecution["knobs"]>;
  toolProtocol?: "native" | "text" | "auto";
  timeoutMs?: number;
  maxRetries?: number;
  apiKey?: string;
  /** The emulated model's context window (reported by its /v1/models, enforced on every request). */
  contextTokens?: number;
  /** A folder to keep the store in, shared by fixtures that stand for one bot before and after a restart; kept on close. */
  dir?: string;
}

export async function engineFixture(options: FixtureOptions = {}): Promise<EngineFixture> {
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), "gh-engine-"));
  const emu = await startOpenAIEmulator({ contextTokens: options.contextTokens });
  const store = await openSqliteStore({ dataDir: path.join(dir, "data") });
  const logLines: string[] = [];
  const log = createLogger({
    level: "debug",
    secrets: options.apiKey ? [options.apiKey] : [],
    destinations: [{ write: (line: string) => void logLines.push(line) }],
  });
  const observer = createObserver(log);
  const events: ObserverEvent[] = [];
  observer.listen((e) => events.push(e));
  const approvals = new ScriptedApprovals();
  const hooks = new HookRegistry({ log });
  const workspace = path.join(dir, "workspace");
  const tools = [...builtinTools({ workspace }), ...(options.tools ?? [])];
  const exec: ResolvedExecution = {
    model: createModelClient({
      baseURL: emu.baseURL, apiKey: options.apiKey ?? "test-key", model: "test-model", toolProtocol: options.toolProtocol ?? "native",
      timeoutMs: options.timeoutMs ?? 5000, maxRetries: options.maxRetries ?? 0, log,
    }),
    catalog: () => tools,
    policy: {
      tools: ToolPolicyConfigSchema.parse({ elevated: { allowFrom: ["console:*"] }, ...options.policy }),
      approval: ApprovalConfigSchema.parse(options.approval ?? {}),
      loop: LoopConfigSchema.parse(options.loop ?? {}),
    },
    hooks, approvals, store, observer, log,
    knobs: {
      maxIterations: 10, maxToolResultChars: 16_000, spillToolResultChars: 200_000, parallelTools: false, duplicateExempt: [],
      excludedTools: [], spillDir: path.join(dir, "spill"), workspace, systemPrompt: "You are a test bot.", ...options.knobs,
    },
  };
  let n = 0;
  return {
    emu, store, exec, approvals, hooks, events, logLines, dir,
    async turn(text, opts = {}) {
      const channel = opts.channel ?? "console";
      const input: IngressEnvelopeInput = {
        id: `e${++n}`, channel, conversation: { id: "c1", kind: opts.kind ?? "dm" },
        sender: { id: opts.sender ?? "U1", name: "Ann", isBot: false }, mentioned: true, text,
        replyTo: { channel, conversationId: "c1" }, receivedAt: Date.now(),
        capabilities: { threads: false, inlineApproval: false, edit: false, typing: false, maxMessageChars: 4000 },
        ...(opts.origin ? { origin: opts.origin } : {}),
      };
      const envelope = parseEnvelope(input);
      const sessionKey = sessionKeyOf(envelope);
      const turnEvents: TurnEvent[] = [];
      const state: TurnState = {
        turnId: `t${n}`, traceId: `trace${n}`, sessionKey, envelope,
        history: await store.loadHistory(sessionKey, 50), signal: opts.signal ?? new AbortController().signal,
        emit: (e) => turnEvents.push(e),
      };
      const outcome = await runTurn(exec, state);
      if (outcome.status === "parked") throw new Error(`the turn parked (${outcome.reason}); this fixture's approvals answer at once`);
      await store.appendHistory(sessionKey, outcome.newMessages);
      return { outcome, turnEvents };
    },
    async close() {
      await emu.close();
      await store.close();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The tool messages of a recorded model request, in order. */
export function toolMessages(body: { messages?: unknown }): Array<{ tool_call_id: string; content: string }> {
  return ((body.messages as Array<{ role: string; tool_call_id: string; content: string }>) ?? []).filter((m) => m.role === "tool");
}

/** The last tool message the model was sent in request `i`. */
export function lastToolResult(emu: OpenAIEmulator, i: number): string {
  const msgs = toolMessages(emu.requests[i]!.body);
  return msgs[msgs.length - 1]?.content ?? "";
}
