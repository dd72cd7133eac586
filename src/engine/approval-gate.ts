/**
 * Step 3.5 — the approval gate. Owns the boundary between a call that may run and one that
 * waits for a person: the requirement (not-required | approved-by-policy | prompt) from policy,
 * hooks and remembered "always" decisions; asking the turn's approval manager; remembering
 * "always"; writing every request and decision to the audit log.
 */
import { approvalRequirement } from "../policy/tool-policy.ts";
import { summarizeArgs } from "../approval/summary.ts";
import { createNonInteractiveApprovals } from "../approval/non-interactive.ts";
import { formatDuration } from "../approval/card.ts";
import { parseSpan } from "../policy/duration.ts";
import { approversFor } from "../approval/approver-rules.ts";
import type { AnyTool } from "../tools/tool.ts";
import type { ApprovalDecision } from "../approval/types.ts";
import { synthetic, type SyntheticResult } from "./synthetic.ts";
import type { ResolvedExecution, TurnState } from "./types.ts";

export type ApprovalStanding = "not-required" | "approved-by-policy" | "approved-by-person";

export type GateOutcome =
  | { pass: true; standing: ApprovalStanding; prompted: boolean }
  | { pass: false; result: SyntheticResult; prompted: boolean };

/**
 * The scope an "always" decision is remembered in. It covers only the sender whose call was answered
 * unless `approval.alwaysCoversOthers` says otherwise: in a group without threads the session is the
 * whole chat. Same keys as policy/always-scope.ts `alwaysScopeKey` (used by `gatehouse explain`).
 */
export function alwaysScope(exec: ResolvedExecution, state: TurnState): string {
  const env = state.envelope;
  const approval = exec.policy.approval;
  const own = approval.alwaysCoversOthers ? "" : `|sender:${env.channel}:${env.sender.id}`;
  switch (approval.alwaysScope) {
    case "sender":
      return `sender:${env.channel}:${env.sender.id}`;
    case "conversation":
      return `conversation:${env.channel}:${env.conversation.id}${own}`;
    default:
      return `session:${state.sessionKey}${own}`;
  }
}

/** Remembers an "Always" for the turn's sender, expiring after `approval.alwaysTtl` when it is set. */
async function rememberAlways(exec: ResolvedExecution, state: TurnState, tool: string): Promise<void> {
  const now = Date.now();
  const ttl = exec.policy.approval.alwaysTtl ? parseSpan(exec.policy.approval.alwaysTtl) : undefined;
  await exec.store.rememberAlways(alwaysScope(exec, state), tool, now, {
    expiresAt: ttl === undefined ? undefined : now + ttl,
    personName: state.envelope.sender.name,
  });
}

/** Why no one can be asked where this message came from. */
function noOneToAsk(env: TurnState["envelope"]): string {
  if (env.origin?.kind === "schedule") return `nobody watches the scheduled task "${env.origin.name}"; give it approvalsTo to ask someone`;
  if (env.origin?.kind === "api") return `nobody watches the API call "${env.origin.name}"; give it approvalsTo to ask someone`;
  return "buttons cannot be shown where this message came from";
}

/**
 * Whether an "Always" answer is remembered for calls that needed a person under `rule`: not for a
 * tool that always asks, nor for a hook's requirement (a hook asks every time, whatever was remembered).
 */
export function alwaysIsRemembered(rule: string): boolean {
  return !rule.startsWith("approval.alwaysAsk") && rule !== HOOK_RULE;
}

const HOOK_RULE = "a before_tool_call hook requires approval";

/**
 * Whether the call needs a person, before asking anyone (used by the repeat guard). Known at once
 * unless the policy would ask: only then is the store read for a remembered "Always".
 */
export function requirementOf(
  exec: ResolvedExecution,
  state: TurnState,
  tool: AnyTool,
  args: Record<string, unknown>,
  hookRequired: boolean,
): GateRequirement | Promise<GateRequirement> {
  if (hookRequired) return { requirement: "prompt", rule: HOOK_RULE };
  const env = state.envelope;
  const subject = { channel: env.channel, senderId: env.sender.id, conversationId: env.conversation.id };
  const unremembered = approvalRequirement(exec.policy.approval, tool, subject, false);
  if (unremembered.requirement !== "prompt") return unremembered;
  return rememberedRequirement(exec, state, tool, args, subject, unremembered);
}

async function rememberedRequirement(
  exec: ResolvedExecution,
  state: TurnState,
  tool: AnyTool,
  args: Record<string, unknown>,
  subject: { channel: string; senderId: string; conversationId: string },
  unremembered: GateRequirement,
): Promise<GateRequirement> {
  const remembered = await exec.store.hasAlways(alwaysScope(exec, state), tool.name);
  if (!remembered) return unremembered;
  // "Always" is remembered per tool, but who may approve depends on the arguments too: a call whose
  // approver rule wants someone other than the requester, or several people, is asked every time
  // (its card offers no "Always" either), whatever was remembered from a call under another rule.
  const approvers = approversFor(exec.policy.approval, { tool, args, channel: subject.channel, conversationId: subject.conversationId });
  if (!approvers.selfApprove || approvers.quorum > 1) return unremembered;
  const withAlways = approvalRequirement(exec.policy.approval, tool, subject, true);
  return withAlways.requirement === "approved-by-policy" ? { ...withAlways, byAlways: true } : withAlways;
}

/** The approval a call needs, the rule that decided, and whether a remembered "Always" is what approved it. */
export interface GateRequirement {
  requirement: "not-required" | "approved-by-policy" | "prompt";
  rule: string;
  byAlways?: boolean;
}

/** A call whose requirement is known, as the gate sees it. */
export interface GateCall {
  id: string;
  tool: string;
  /** `builtin` or `mcp:<server>` (approver rules match tool patterns against both). */
  owner?: string;
  params: Record<string, unknown>;
  argsHash: string;
}

/** What asking produced: a gate outcome now, or a wait for a person (the turn parks). */
export type GateStep =
  | { kind: "outcome"; outcome: GateOutcome }
  | { kind: "waiting"; approvalId: string; expiresAt: number };

/** The gate's step for a call that needs no approval: it passes. */
export const NOT_REQUIRED: GateStep = Object.freeze({ kind: "outcome", outcome: Object.freeze({ pass: true, standing: "not-required", prompted: false }) });

/** Runs the gate for one call whose requirement is known: passes it, or asks the turn's approval manager. */
export async function passApprovalGate(
  exec: ResolvedExecution,
  state: TurnState,
  call: GateCall,
  requirement: GateRequirement,
): Promise<GateStep> {
  if (requirement.requirement === "not-required") return NOT_REQUIRED;
  const env = state.envelope;
  const tool = call.tool;
  const base = { traceId: state.traceId, sessionKey: state.sessionKey, channel: env.channel, tool, argsHash: call.argsHash };
  const requester = { requesterId: env.sender.id, requesterName: env.sender.name };
  const argsSummary = summarizeArgs(call.params);
  if (requirement.requirement === "approved-by-policy") {
    // The decision log holds every call that ran without a person too: one entry, no request before it.
    await exec.store.appendAudit({
      at: Date.now(), kind: "approval.decided", ...base, ...requester, argsSummary,
      source: requirement.byAlways ? "always" : "policy", outcome: "approved", reason: requirement.rule,
    });
    return { kind: "outcome", outcome: { pass: true, standing: "approved-by-policy", prompted: false } };
  }
  state.emit({ type: "approval.waiting", callId: call.id, tool });
  exec.observer.emit({ event: "approval.requested", ...base, callId: call.id, manager: exec.approvals.kind, rule: requirement.rule });
  await exec.store.appendAudit({
    at: Date.now(), kind: "approval.requested", ...base, ...requester, argsSummary, actorId: env.sender.id, actorName: env.sender.name,
    source: exec.approvals.kind, detail: requirement.rule,
  });
  // A channel that can show buttons may still receive a message from a place that cannot (the envelope says).
  const manager =
    exec.approvals.kind === "backchannel" && !env.capabilities.inlineApproval
      ? createNonInteractiveApprovals(noOneToAsk(env))
      : exec.approvals;
  const answer = await manager.request({
    turnId: state.turnId, traceId: state.traceId, sessionKey: state.sessionKey, callId: call.id, tool,
    args: call.params, argsHash: call.argsHash, argsSummary, channel: env.channel,
    conversationId: env.conversation.id, requester: env.sender, target: env.approvalTarget ?? env.replyTo, signal: state.signal,
    allowAlways: alwaysIsRemembered(requirement.rule),
    // A schedule or an API call is nobody: only the configured approvers may decide its calls.
    requesterMayApprove: env.origin === undefined,
    approvers: approversFor(exec.policy.approval, {
      tool: { name: tool, owner: call.owner ?? "builtin" }, args: call.params, channel: env.channel, conversationId: env.conversation.id,
    }),
  });
  if (answer.outcome === "waiting") return { kind: "waiting", approvalId: answer.approvalId, expiresAt: answer.expiresAt };
  return { kind: "outcome", outcome: await applyDecision(exec, state, call, requirement.rule, answer) };
}

/**
 * Turns a person's (or the timeout's) decision into the gate's outcome: written to the audit log,
 * "always" remembered. Used at once for immediate answers, and when a parked turn resumes.
 */
export async function applyDecision(
  exec: ResolvedExecution,
  state: TurnState,
  call: GateCall,
  rule: string,
  decision: ApprovalDecision,
): Promise<GateOutcome> {
  const env = state.envelope;
  const tool = call.tool;
  const base = { traceId: state.traceId, sessionKey: state.sessionKey, channel: env.channel, tool, argsHash: call.argsHash };
  exec.observer.emit({ event: "approval.decided", ...base, callId: call.id, outcome: decision.outcome, by: decision.by?.id, source: decision.source });
  await exec.store.appendAudit({
    at: Date.now(), kind: "approval.decided", ...base, requesterId: env.sender.id, requesterName: env.sender.name,
    argsSummary: summarizeArgs(call.params), actorId: decision.by?.id, actorName: decision.by?.name,
    decidedById: decision.by?.id, decidedByName: decision.by?.name,
    source: decision.source, outcome: decision.outcome, reason: decision.reason, detail: rule,
  });
  const who = decision.by ? (decision.by.name ? `${decision.by.name} (${decision.by.id})` : decision.by.id) : "unknown";
  switch (decision.outcome) {
    case "always":
      // A tool that always asks is never remembered: the answer counts as this one approval.
      if (alwaysIsRemembered(rule)) await rememberAlways(exec, state, tool);
      return { pass: true, standing: "approved-by-person", prompted: true };
    case "approved":
      return { pass: true, standing: "approved-by-person", prompted: true };
    case "denied":
      return { pass: false, result: synthetic.deniedByPerson(tool, who, decision.reason), prompted: true };
    case "timeout":
      return {
        pass: false,
        result: synthetic.approvalTimeout(tool, formatDuration(exec.policy.approval.timeoutMs)),
        prompted: true,
      };
    case "cancelled":
      return { pass: false, result: synthetic.approvalCancelled(tool), prompted: true };
    case "unavailable":
      return { pass: false, result: synthetic.noApprovalChannel(tool, decision.reason), prompted: true };
  }
}
