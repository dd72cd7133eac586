/**
 * Scenario helpers for bot-level tests: tools whose timing the test controls, and a model
 * script keyed by what the person asked, so that turns running at the same time each get
 * their own answers no matter in which order their requests reach the emulator.
 */
import { z } from "zod";
import type { AnyTool, Tool } from "../../src/tools/tool.ts";
import type { OpenAIEmulator, RecordedRequest, Step } from "../emulators/openai/index.ts";

interface LooseMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
}

/** The messages of a recorded request. */
export function messagesOf(request: RecordedRequest): LooseMessage[] {
  return (request.body.messages as LooseMessage[] | undefined) ?? [];
}

/** The text of the last user message of a request. */
export function lastUserText(request: RecordedRequest): string {
  const users = messagesOf(request).filter((m) => m.role === "user");
  const content = users[users.length - 1]?.content;
  return typeof content === "string" ? content : "";
}

/** Whether the request ends with tool results, i.e. the model is asked to continue after its calls. */
export function afterTools(request: RecordedRequest): boolean {
  return messagesOf(request).at(-1)?.role === "tool";
}

/** A route: when the last user message contains `when`, answer the first request with `first`, the follow-up with `then`. */
export interface ModelRoute {
  when: string;
  first: Step;
  then?: Step;
}

/** Makes the emulator answer by route; unmatched requests get a plain text answer. */
export function routeModel(model: OpenAIEmulator, routes: ModelRoute[]): void {
  model.setFallback((request) => {
    const text = lastUserText(request);
    const route = routes.find((r) => text.includes(r.when));
    if (!route) return { text: `answer to: ${text}` };
    return afterTools(request) ? (route.then ?? { text: `done: ${route.when}` }) : route.first;
  });
}

/** A native tool call step. */
export function callTools(...calls: Array<{ name: string; args?: Record<string, unknown>; id?: string }>): Step {
  return { toolCalls: calls.map((c) => ({ name: c.name, arguments: JSON.stringify(c.args ?? {}), id: c.id })) };
}

/** A tool that runs until the test releases it (or the turn is stopped), to hold a turn open. */
export interface HeldTool {
  tool: AnyTool;
  /** How many times it started. */
  readonly starts: number;
  /** How many of its runs ended because their turn was stopped (its abort signal). */
  readonly stops: number;
  /** Resolves when it has started `n` times (default 1). */
  started(n?: number): Promise<void>;
  /** Lets every waiting run finish. */
  release(): void;
}

/** Creates a held tool named `name` (risk read: it runs without approval). */
export function heldTool(name: string): HeldTool {
  let starts = 0;
  let stops = 0;
  let releaseAll: () => void = () => {};
  let released = new Promise<void>((r) => (releaseAll = r));
  const startWaiters: Array<{ n: number; resolve: () => void }> = [];
  const tool: Tool<Record<string, unknown>> = {
    name,
    description: `Waits until the test lets it finish (${name}).`,
    parameters: z.record(z.string(), z.unknown()),
    risk: "read",
    owner: "builtin",
    async execute(_args, ctx) {
      starts++;
      for (const w of startWaiters.filter((w) => starts >= w.n)) w.resolve();
      const aborted = new Promise<"aborted">((r) => ctx.signal.addEventListener("abort", () => r("aborted"), { once: true }));
      const how = await Promise.race([released.then(() => "released" as const), aborted]);
      if (how === "aborted") stops++;
      return how === "released"
        ? { success: true, output: `${name} finished` }
        : { success: true, output: `${name} saw the stop and wrapped up` };
    },
  };
  return {
    tool,
    get starts() {
      return starts;
    },
    get stops() {
      return stops;
    },
    started(n = 1) {
      if (starts >= n) return Promise.resolve();
      return new Promise((resolve) => startWaiters.push({ n, resolve }));
    },
    release() {
      releaseAll();
      released = new Promise<void>((r) => (releaseAll = r));
    },
  };
}

/** A quick read tool that counts its runs and answers `<name> ran`. */
export function countingTool(name: string, risk: "read" | "write" = "read"): { tool: AnyTool; readonly runs: number } {
  let runs = 0;
  const tool: Tool<Record<string, unknown>> = {
    name,
    description: `Answers "${name} ran".`,
    parameters: z.record(z.string(), z.unknown()),
    risk,
    owner: "builtin",
    async execute() {
      runs++;
      return { success: true, output: `${name} ran` };
    },
  };
  return {
    tool,
    get runs() {
      return runs;
    },
  };
}
