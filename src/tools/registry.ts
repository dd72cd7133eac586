/**
 * The tool registry: the set of tools one agent may use, looked up by name, plus the two
 * things every caller needs from a tool's schema — the JSON schema offered to the model and
 * the validation of the arguments the model sends back.
 */
import { z } from "zod";
import type { AnyTool } from "./tool.ts";
import type { ToolSpec } from "../model/types.ts";

/** Tool names the model can call: the OpenAI function-name alphabet, 1 to 64 characters. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Holds tools by unique name; a second tool with a taken name is a configuration error. */
export class ToolRegistry {
  readonly #tools = new Map<string, AnyTool>();

  constructor(tools: Iterable<AnyTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; throws when the name is malformed or already taken (names must stay unambiguous to the model). */
  register(tool: AnyTool): void {
    if (!TOOL_NAME.test(tool.name)) {
      throw new Error(`tool name "${tool.name}" is not allowed: use 1-64 letters, digits, "_" or "-"`);
    }
    const existing = this.#tools.get(tool.name);
    if (existing) {
      throw new Error(`a tool named "${tool.name}" is already registered (owner ${existing.owner}); rename one of them`);
    }
    this.#tools.set(tool.name, tool);
  }

  /** The tool with this name, or undefined when there is none. */
  get(name: string): AnyTool | undefined {
    return this.#tools.get(name);
  }

  /** Whether a tool with this name is registered. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Every tool, in registration order. */
  list(): AnyTool[] {
    return [...this.#tools.values()];
  }

  /** Every tool name, in registration order. */
  get names(): string[] {
    return [...this.#tools.keys()];
  }

  /** How many tools are registered. */
  get size(): number {
    return this.#tools.size;
  }
}

/** Specs already built, per tool object: a tool's schema does not change, and deriving it is costly. */
const specs = new WeakMap<AnyTool, ToolSpec>();

/** The tool as offered to the model: its raw JSON schema if it has one, else one derived from its zod parameters. */
export function toolSpecOf(tool: AnyTool): ToolSpec {
  let spec = specs.get(tool);
  if (!spec) {
    spec = buildSpec(tool);
    specs.set(tool, spec);
  }
  return spec;
}

function buildSpec(tool: AnyTool): ToolSpec {
  const source: Record<string, unknown> = tool.jsonSchema
    ? tool.jsonSchema
    : // "input" describes what the model must send: fields with defaults are optional.
      (z.toJSONSchema(tool.parameters, { io: "input", unrepresentable: "any" }) as Record<string, unknown>);
  const { $schema: _, ...schema } = source;
  // Serialized into every model request: rebuilt as plain JSON objects, which JSON.stringify takes
  // on its fast path (objects that had keys deleted, as generated schemas may, take the slow one).
  return { name: tool.name, description: tool.description, parameters: JSON.parse(JSON.stringify(schema)) as Record<string, unknown> };
}

/** The outcome of checking a call's arguments against a tool's parameters. */
export type ArgsValidation<A = unknown> = { ok: true; value: A } | { ok: false; error: string };

/**
 * Checks the model's arguments against the tool's parameters. The error names every bad
 * field and what was expected, so the model can correct the call on its next try.
 */
export function validateArgs<A>(tool: { name: string; parameters: z.ZodType<A> }, args: unknown): ArgsValidation<A> {
  const parsed = tool.parameters.safeParse(args ?? {});
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues.map(describeIssue);
  return { ok: false, error: `invalid arguments for ${tool.name}: ${problems.join("; ")}` };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? `"${issue.path.map(String).join(".")}"` : "arguments";
  switch (issue.code) {
    case "invalid_type": {
      const missing = /received undefined/.test(issue.message);
      if (missing) return `${where} is required (expected ${issue.expected})`;
      return `${where}: expected ${issue.expected}, ${issue.message.replace(/^Invalid input: expected \S+, /, "")}`;
    }
    case "unrecognized_keys":
      return `${where}: unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
    default:
      return `${where}: ${issue.message}`;
  }
}
