/**
 * The Tool interface: what the model can call. Built-ins and MCP tools implement it alike;
 * policy, hooks, approvals, truncation and receipts apply to every tool the same way.
 */
import type { z } from "zod";
import type { Logger } from "pino";

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
