/**
 * The Tool interface: what the model can call. Built-ins and MCP tools implement it alike;
 * policy, hooks, approvals, truncation and receipts apply to every tool the same way.
 */
import type { z } from "zod";
import type { Logger } from "pino";
import type { Answerer, Question, QuestionAnswer } from "../approval/questions.ts";

/** How much harm a call can do: decides default approval and elevated-execution rules. */
export type ToolRisk = "read" | "write" | "exec";

export interface ToolResult {
  success: boolean;
  output: string;
  error?: string;
}

export interface ToolContext {
  signal: AbortSignal;
  /** The folder file and shell tools are confined to. */
  workspace: string;
  sessionKey: string;
  senderId: string;
  log: Logger;
  /** Reports how far a long call got ("3/10"), shown as the call's progress line; optional to call. */
  onProgress?: (text: string) => void;
  /**
   * Asks the person who made the request a question while the call runs (approval/questions.ts),
   * bounded by the approval timeout and cancelled by `/stop`. Where no one can be asked it declines
   * by itself and says why in the thread.
   */
  ask?(question: Question, options?: { signal?: AbortSignal }): Promise<QuestionAnswer>;
  /**
   * Runs the gate for something the call asks to do besides itself (an MCP server's sampling
   * request) as for a tool call of `action.name`: exclusions, policy, hooks, and a person's approval
   * asked through `ask` where one is needed.
   */
  authorize?(action: ToolAction, options?: { signal?: AbortSignal }): Promise<ActionVerdict>;
  /** One request to the turn's model, without tools. Throws ModelError when the model fails. */
  complete?(request: ToolModelRequest): Promise<ToolModelReply>;
  /** Writes an entry to the audit log; the turn's trace, session, channel and sender are filled in. */
  audit?(entry: ToolAuditEntry): Promise<void>;
}

/** Something a running call asks to do besides itself, gated like a call of a tool named `name`. */
export interface ToolAction {
  /** The name policy patterns match (`mcp__github__sampling`). */
  name: string;
  /** `builtin` or `mcp:<server>`. */
  owner: string;
  risk: ToolRisk;
  /** Who asks, as a person reads it: `MCP server "github"`. */
  from: string;
  /** What hooks see and the argument hash covers. */
  params: Record<string, unknown>;
  /** What a person deciding reads: short and secret-free. */
  summary: string;
}

/** The gate's answer for an action, with the rule or person that decided. */
export type ActionVerdict = { allowed: true; rule: string; by?: Answerer } | { allowed: false; reason: string };

/** A tool-less model request made for a running call. */
export interface ToolModelRequest {
  system?: string;
  messages: Array<{ role: "user" | "assistant"; content: string }>;
  /** The most tokens the answer may take. */
  maxTokens: number;
  signal?: AbortSignal;
}

export interface ToolModelReply {
  text: string;
  /** Why the model stopped: it was done, it hit `maxTokens`, or something else. */
  stopped: "end" | "max-tokens" | "other";
  /** The model's name, as far as it is known. */
  model: string;
}

/** An audit entry a call writes (for what it did besides its own result). */
export interface ToolAuditEntry {
  kind: string;
  tool?: string;
  source?: string;
  outcome?: string;
  /** Hash of the action's exact arguments (approval/summary.ts `hashCall`). */
  argsHash?: string;
  /** Never message content: sizes, limits, reasons. */
  detail?: string;
  actorId?: string;
  actorName?: string;
}

export interface Tool<A = unknown> {
  name: string;
  description: string;
  /** Validates the arguments; also the source of the JSON schema offered to the model. */
  parameters: z.ZodType<A>;
  /** A raw JSON schema to offer instead of one derived from `parameters` (MCP tools). */
  jsonSchema?: Record<string, unknown>;
  risk: ToolRisk;
  /** `builtin` or `mcp:<server>`. */
  owner: string;
  /**
   * Running it again has no effect anyone can see (it reads local state: the clock, the workspace).
   * A turn does not checkpoint around such calls: after a crash it runs them again instead.
   */
  replayable?: boolean;
  /**
   * Set when the tool may be offered on the local console only, with the reason (the shell where no
   * sandbox can contain it): the policy refuses it on every other channel, naming this reason.
   */
  localOnly?: string;
  /** A short hint for the progress line ("ls -la"), from the arguments. */
  hint?(args: A): string;
  /**
   * Says why a call cannot run (a path outside the workspace…) before anyone is asked to approve
   * it; undefined when it can. Checked again by `execute`.
   */
  check?(args: A, ctx: { workspace: string }): Promise<string | undefined>;
  execute(args: A, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool with its argument type erased, as stored in a registry. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry holds tools of every argument type
export type AnyTool = Tool<any>;
