/**
 * Step 3 — prepare. Owns everything between a parsed call and a runnable one, in this order:
 * refusal of tools not offered (before any hook), before_tool_call hooks, channel delivery
 * defaults, stripping a model-supplied `approved` flag, argument validation, the repeat guard, the
 * approval gate, the runtime approval marker, and the duplicate guard (DESIGN §4.3). The loop
 * detector (§4.6) looks at a call before the gate, so no one is asked about a call it blocks; an
 * identical call later in the batch reuses the first one's decision instead of asking again.
 */
import { canonicalJson } from "../observe/receipts.ts";
import { hashCanonicalCall } from "../approval/summary.ts";
import { validateArgs } from "../tools/registry.ts";
import type { LoopDetector } from "./loop-detector.ts";
import type { AnyTool, ToolResult } from "../tools/tool.ts";
import type { Availability } from "./availability.ts";
import { NOT_REQUIRED, passApprovalGate, requirementOf, type ApprovalStanding, type GateOutcome } from "./approval-gate.ts";
import type { BeforeToolCallOutcome } from "../policy/hooks.ts";
import { synthetic } from "./synthetic.ts";
import type { ParsedCall, ResolvedExecution, TurnState } from "./types.ts";

export interface PreparedCall {
  call: ParsedCall;
  /** The arguments the tool runs with (after hooks; frozen once approval was asked). */
  params: Record<string, unknown>;
  /** Set when the call will not run; the result the model gets instead. */
  result?: ToolResult;
  standing: ApprovalStanding;
  /** A person was asked about this call. */
  prompted: boolean;
  /** A note for the model from the loop detector, appended to the result. */
  loopWarning?: string;
  /** `params` as canonical JSON, once they are final (absent in records saved before it was kept). */
  argsCanonical?: string;
}

/** State the guards keep across the batches of one turn. */
export interface TurnGuards {
  /** Prompt-required calls that were not approved, by call hash. */
  unapprovedPrompts: Set<string>;
  loop: LoopDetector;
  /** Tool-call ids used so far in the turn. */
  callIds: Set<string>;
  /** Set when a guard ends the turn: the message the person sees. */
  endTurn?: string;
}

/** What the batch has decided so far (plain data, saved with a parked turn). */
export interface BatchDecisions {
  /** Gate outcomes by argument hash: an identical call later in the batch reuses the first one's. */
  decided: Record<string, GateOutcome>;
  /** The first call of each identical tool + arguments, for the duplicate guard. */
  firstOfKind: Record<string, string>;
}

/** A call that waits for a person: everything needed to finish preparing it when the decision comes. */
export interface WaitingCall {
  /** Position of the call in the batch. */
  index: number;
  approvalId: string;
  expiresAt: number;
  params: Record<string, unknown>;
  argsHash: string;
  /** The rule that required approval (an alwaysAsk rule never remembers "Always"). */
  rule: string;
  loopWarning?: string;
}

export type PrepareStep = { kind: "prepared"; prepared: PreparedCall } | { kind: "waiting"; waiting: Omit<WaitingCall, "index"> };

const APPROVED_FLAGS = ["approved", "__approved", "_approved"];

/** Prepares one call of a batch, in the model's order; a call that needs a person comes back `waiting`. */
export async function prepareCall(
  exec: ResolvedExecution,
  state: TurnState,
  call: ParsedCall,
  availability: Availability,
  guards: TurnGuards,
  batch: BatchDecisions,
): Promise<PrepareStep> {
  const p: PreparedCall = { call, params: call.args, standing: "not-required", prompted: false };
  const done = (result?: ToolResult): PrepareStep => {
    if (result) p.result = result;
    return { kind: "prepared", prepared: p };
  };
  const env = state.envelope;
  if (guards.endTurn || state.signal.aborted) return done(synthetic.interrupted(call.name));
  if (call.parseError) return done(synthetic.parseError(call.name, call.parseError));
  const tool = availability.offered.get(call.name);
  if (!tool) {
    const refusal = availability.refusals.get(call.name);
    if (refusal?.byPolicy) {
      exec.observer.emit({ event: "policy.refused", traceId: state.traceId, sessionKey: state.sessionKey, tool: call.name, rule: refusal.rule });
      await exec.store.appendAudit({
        at: Date.now(), kind: "policy.refused", traceId: state.traceId, sessionKey: state.sessionKey,
        channel: env.channel, tool: call.name, actorId: env.sender.id, source: "policy", outcome: "refused", detail: refusal.rule,
      });
      return done(synthetic.policyRefused(call.name, refusal.rule));
    }
    if (refusal) return done(synthetic.parseError(call.name, refusal.rule));
    return done(synthetic.unknownTool(call.name, [...availability.offered.keys()]));
  }

  // 3.1 before_tool_call hooks: block (sticky), rewrite, or require approval (freezes params).
  const hooked: BeforeToolCallOutcome = exec.hooks.hasBefore
    ? await exec.hooks.runBefore({
      callId: call.id, tool: tool.name, owner: tool.owner, params: call.args, sessionKey: state.sessionKey, senderId: env.sender.id, channel: env.channel,
    })
    : { params: call.args };
  if (hooked.blocked) {
    exec.observer.emit({ event: "hook.blocked", traceId: state.traceId, sessionKey: state.sessionKey, tool: tool.name, hook: hooked.blocked.by });
    await exec.store.appendAudit({
      at: Date.now(), kind: "hook.blocked", traceId: state.traceId, sessionKey: state.sessionKey, channel: env.channel,
      tool: tool.name, source: `hook:${hooked.blocked.by}`, outcome: "blocked", detail: hooked.blocked.reason,
    });
    return done(synthetic.hookBlocked(tool.name, hooked.blocked.by, hooked.blocked.reason));
  }
  // 3.2 channel delivery defaults: a tool that posts somewhere defaults to this conversation.
  let params = { ...hooked.params };
  if (isDeliveryTool(tool) && params.deliver_to === undefined) params.deliver_to = env.replyTo;
  // 3.3 a model-supplied approval flag never counts.
  for (const flag of APPROVED_FLAGS) if (flag in params) delete params[flag];
  const valid = validateArgs(tool, params);
  if (!valid.ok) return done(synthetic.invalidArgs(tool.name, valid.error));
  params = valid.value as Record<string, unknown>;
  p.params = params;
  if (tool.check) {
    const problem = await tool.check(params, { workspace: exec.knobs.workspace }).catch((err: Error) => err.message);
    if (problem) return done(synthetic.invalidArgs(tool.name, problem));
  }
  // The final arguments in canonical form, computed once: the call hash, the guards and the receipt use it.
  const argsCanonical = canonicalJson(params);
  p.argsCanonical = argsCanonical;
  const argsHash = hashCanonicalCall(tool.name, argsCanonical);

  // 3.4 repeat guard: the same prompt-required call asked again after it was not approved ends the turn.
  const required = requirementOf(exec, state, tool, params, Boolean(hooked.approvalRequired));
  const requirement = required instanceof Promise ? await required : required;
  if (requirement.requirement === "prompt" && guards.unapprovedPrompts.has(argsHash) && !(argsHash in batch.decided)) {
    guards.endTurn = `I stopped: the model asked again to run ${tool.name} with the same arguments after it was not approved.`;
    return done(synthetic.interrupted(tool.name));
  }
  // The loop detector (§4.6) looks at the call before anyone is asked: no one approves a call it blocks.
  const loop = guards.loop.check({ name: tool.name, owner: tool.owner, argsCanonical });
  if (loop.level !== "ok") {
    exec.observer.emit({ event: "loop.detected", traceId: state.traceId, sessionKey: state.sessionKey, tool: tool.name, level: loop.level, reason: loop.reason });
  }
  if (loop.level === "warn") p.loopWarning = loop.reason;
  if (loop.level === "block" || loop.level === "abort") {
    if (loop.level === "abort") guards.endTurn = `I stopped this task: ${loop.reason ?? "the model kept repeating itself"}.`;
    return done(synthetic.loopBlocked(tool.name, loop.reason ?? "repeated calls"));
  }

  // 3.5 approval gate. An identical call earlier in this batch was already decided: that decision
  // stands, so nobody is asked twice about the same call.
  const earlier = batch.decided[argsHash];
  if (earlier) return { kind: "prepared", prepared: finishGate(exec, p, argsHash, { ...earlier, prompted: false }, guards, batch) };
  const gate = requirement.requirement === "not-required"
    ? NOT_REQUIRED
    : await passApprovalGate(exec, state, { id: call.id, tool: tool.name, owner: tool.owner, params, argsHash }, requirement);
  if (gate.kind === "waiting") {
    return { kind: "waiting", waiting: { approvalId: gate.approvalId, expiresAt: gate.expiresAt, params, argsHash, rule: requirement.rule, loopWarning: p.loopWarning } };
  }
  return { kind: "prepared", prepared: finishGate(exec, p, argsHash, gate.outcome, guards, batch) };
}

/** The prepared form of a call that waited, once its decision is applied (a parked turn resuming). */
export function preparedAfterDecision(
  exec: ResolvedExecution,
  call: ParsedCall,
  waiting: WaitingCall,
  gate: GateOutcome,
  guards: TurnGuards,
  batch: BatchDecisions,
): PreparedCall {
  const p: PreparedCall = {
    call, params: waiting.params, standing: "not-required", prompted: false, loopWarning: waiting.loopWarning, argsCanonical: canonicalJson(waiting.params),
  };
  return finishGate(exec, p, waiting.argsHash, gate, guards, batch);
}

/** Steps 3.5 (recording the decision) to 3.7 for a call whose gate outcome is known. */
function finishGate(exec: ResolvedExecution, p: PreparedCall, argsHash: string, gate: GateOutcome, guards: TurnGuards, batch: BatchDecisions): PreparedCall {
  batch.decided[argsHash] ??= gate;
  p.prompted = gate.prompted;
  if (!gate.pass) {
    guards.unapprovedPrompts.add(argsHash);
    p.result = gate.result;
    return p;
  }
  // 3.6 the runtime approval marker, only for calls approved by policy or a person.
  p.standing = gate.standing;

  // 3.7 duplicate guard: identical calls in one batch run once.
  // canonicalJson({ tool, params }), keys in order (parked records keep these keys).
  const key = `{"params":${p.argsCanonical ?? canonicalJson(p.params)},"tool":${JSON.stringify(p.call.name)}}`;
  const first = batch.firstOfKind[key];
  if (first && !exec.knobs.duplicateExempt.includes(p.call.name)) {
    p.result = synthetic.duplicate(p.call.name, first);
    return p;
  }
  batch.firstOfKind[key] = p.call.id;
  return p;
}

/** Tools that post to a channel declare a `deliver_to` parameter; it defaults to the current thread. */
function isDeliveryTool(tool: AnyTool): boolean {
  const schema = tool.jsonSchema as { properties?: Record<string, unknown> } | undefined;
  return Boolean(schema?.properties && "deliver_to" in schema.properties);
}
