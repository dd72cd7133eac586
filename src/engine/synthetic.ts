/**
 * The texts of synthetic results: what the model (and the audit log, and a person reading the
 * thread) is told when a call did not run, or did not run normally. Each states exactly what
 * happened and who decided; different facts read differently.
 */
import type { ToolResult } from "../tools/tool.ts";

export type SyntheticKind =
  | "parse-error"
  | "unknown-tool"
  | "invalid-args"
  | "policy-refused"
  | "hook-blocked"
  | "denied-by-person"
  | "no-approval-channel"
  | "approval-timeout"
  | "approval-cancelled"
  | "duplicate"
  | "loop-blocked"
  | "interrupted"
  | "interrupted-by-restart"
  | "no-longer-offered";

export interface SyntheticResult extends ToolResult {
  success: false;
  synthetic: SyntheticKind;
}

function result(kind: SyntheticKind, text: string): SyntheticResult {
  return { success: false, output: "", error: text, synthetic: kind };
}

export const synthetic = {
  parseError: (tool: string, detail: string) => result("parse-error", `${tool || "(no name)"} was not run: ${detail}.`),
  unknownTool: (tool: string, available: string[]) =>
    result(
      "unknown-tool",
      `unknown tool "${tool}"; it was not run. Available tools: ${available.length ? available.join(", ") : "(none)"}.`,
    ),
  invalidArgs: (tool: string, detail: string) => result("invalid-args", `${tool} was not run: invalid arguments: ${detail}`),
  policyRefused: (tool: string, rule: string) => result("policy-refused", `${tool} was not run: refused by policy (${rule}).`),
  hookBlocked: (tool: string, hook: string, reason: string) =>
    result("hook-blocked", `${tool} was not run: blocked by hook "${hook}": ${reason}`),
  deniedByPerson: (tool: string, who: string, reason?: string) =>
    result("denied-by-person", reason ? `${tool} was not run: denied by ${who}: ${reason}` : `${tool} was not run: denied by ${who}.`),
  noApprovalChannel: (tool: string, reason?: string) =>
    result(
      "no-approval-channel",
      `${tool} was not run: denied: no approval channel here (${reason ?? "this channel cannot ask a person"}), and ${tool} needs approval.`,
    ),
  approvalTimeout: (tool: string, waited: string) =>
    result("approval-timeout", `${tool} was not run: timed out waiting for approval (no decision within ${waited}).`),
  approvalCancelled: (tool: string) =>
    result("approval-cancelled", `${tool} was not run: the turn was stopped while it waited for approval.`),
  duplicate: (tool: string, ofCallId: string) =>
    result("duplicate", `${tool} was not run again: duplicate of call ${ofCallId} in the same batch; use that call's result.`),
  loopBlocked: (tool: string, reason: string) => result("loop-blocked", `${tool} was not run: blocked by the loop detector: ${reason}`),
  interrupted: (tool: string) => result("interrupted", `${tool} was not run: interrupted, the turn was stopped before it ran.`),
  interruptedByRestart: (tool: string) =>
    result(
      "interrupted-by-restart",
      `${tool} was interrupted by a restart of the bot while it ran; whether it finished is unknown, and it was not run again.`,
    ),
  noLongerOffered: (tool: string) =>
    result("no-longer-offered", `${tool} was not run: the tool is no longer available (its server may be down).`),
};

/** True for results produced by the engine rather than by running the tool. */
export function isSynthetic(r: ToolResult): r is SyntheticResult {
  return (r as SyntheticResult).synthetic !== undefined;
}
