/**
 * Step 4b — what a running call may ask of its turn (part of dispatch): a question for the person who
 * made the request, the gate for an action besides the call (an MCP server's sampling request, gated
 * as a call of its own name), one tool-less model request, and audit entries. Each is bound to the
 * turn: its sender, thread, signal (`/stop`) and the approval timeout. A question cannot park the
 * turn (the asking call is still running), so it waits in memory, bounded by that timeout, but
 * without the turn's concurrency slot (TurnState.awayFromSlot).
 */
import { hashCall } from "../approval/summary.ts";
import type { Question, QuestionAnswer, QuestionAudience } from "../approval/questions.ts";
import type { ChatMessage } from "../model/types.ts";
import { approvalRequirement, toolAvailability } from "../policy/tool-policy.ts";
import type { ActionVerdict, ToolAction, ToolAuditEntry, ToolContext, ToolModelReply, ToolModelRequest } from "../tools/tool.ts";
import { alwaysScope } from "./approval-gate.ts";
import type { ResolvedExecution, TurnState } from "./types.ts";

/** The call a request comes from. */
export interface RequestingCall {
  id: string;
  tool: string;
}

const HOOK_RULE = "a before_tool_call hook requires approval";

/** Why no one can answer a question of this turn; undefined when someone can. */
export function whyNoOneIsAsked(exec: ResolvedExecution, env: TurnState["envelope"]): string | undefined {
  if (env.origin?.kind === "schedule") return `nobody watches the scheduled task "${env.origin.name}"`;
  if (env.origin?.kind === "api") return `nobody watches the API call "${env.origin.name}"`;
  if (!exec.questions) return "this channel cannot ask questions";
  return undefined;
}

/** The turn-bound requests a call's context carries. */
export function toolRequests(exec: ResolvedExecution, state: TurnState, call: RequestingCall): Pick<ToolContext, "ask" | "authorize" | "complete" | "audit"> {
  const env = state.envelope;
  const audit = (entry: ToolAuditEntry) =>
    exec.store.appendAudit({
      at: Date.now(), traceId: state.traceId, sessionKey: state.sessionKey, channel: env.channel,
      actorId: env.sender.id, actorName: env.sender.name, ...entry,
    });
  const signalWith = (extra?: AbortSignal) => (extra ? AbortSignal.any([state.signal, extra]) : state.signal);

  const ask = async (question: Question, options: { signal?: AbortSignal } = {}): Promise<QuestionAnswer> => {
    const base = { traceId: state.traceId, sessionKey: state.sessionKey, tool: call.tool };
    const reason = whyNoOneIsAsked(exec, env);
    if (reason || !exec.questions) {
      const why = reason ?? "no one can be asked";
      state.emit({ type: "notice", text: `❓ ${question.from} asked a question during ${call.tool}; it was declined: ${why}.` });
      exec.observer.emit({ event: "question.declined", ...base, reason: why });
      await audit({ kind: "question.declined", tool: call.tool, source: "non-interactive", outcome: "decline", detail: why });
      return { action: "decline", reason: why };
    }
    const admins = exec.policy.approval.approvers[env.channel] ?? [];
    const audience: QuestionAudience = {
      target: env.replyTo, requester: env.sender, traceId: state.traceId, sessionKey: state.sessionKey,
      answerers: [...new Set([env.sender.id, ...admins])],
    };
    exec.observer.emit({ event: "question.asked", ...base, kind: question.kind, fields: question.fields.length });
    const questions = exec.questions;
    const asked = () => questions.ask(question, { signal: signalWith(options.signal), timeoutMs: exec.policy.approval.timeoutMs, audience });
    // The turn's slot is for computing: while the person thinks, other conversations use it.
    const answer = await (state.awayFromSlot ? state.awayFromSlot(asked) : asked());
    const by = answer.action === "cancel" ? undefined : answer.by;
    exec.observer.emit({ event: "question.answered", ...base, action: answer.action, by: by?.id });
    // The values answered are the tool's to pass on; the log only says who answered and how.
    await audit({
      kind: "question.answered", tool: call.tool, source: "question", outcome: answer.action, actorId: by?.id, actorName: by?.name,
      detail: answer.action === "accept" ? `${Object.keys(answer.values).length} of ${question.fields.length} fields` : answer.reason,
    });
    return answer;
  };

  const authorize = async (action: ToolAction, options: { signal?: AbortSignal } = {}): Promise<ActionVerdict> => {
    const subject = { channel: env.channel, senderId: env.sender.id, conversationId: env.conversation.id };
    const descriptor = { name: action.name, owner: action.owner, risk: action.risk };
    const argsHash = hashCall(action.name, action.params);
    const decided = async (outcome: string, source: string, detail: string, by?: { id: string; name?: string }) => {
      exec.observer.emit({ event: "action.decided", traceId: state.traceId, sessionKey: state.sessionKey, tool: action.name, callId: call.id, outcome, source });
      await audit({ kind: "action.decided", tool: action.name, source, outcome, detail, actorId: by?.id ?? env.sender.id, actorName: by ? by.name : env.sender.name });
    };
    const refuse = async (reason: string, source: string): Promise<ActionVerdict> => {
      await decided("refused", source, reason);
      return { allowed: false, reason };
    };
    if (exec.knobs.excludedTools.includes(action.name)) return refuse("excluded for this agent", "policy");
    const offered = toolAvailability(exec.policy.tools, exec.policy.approval, descriptor, subject);
    if (!offered.offered) return refuse(`refused by policy (${offered.rule})`, "policy");
    const hooked = await exec.hooks.runBefore({
      callId: `${call.id}:${action.name}`, tool: action.name, owner: action.owner, params: action.params,
      sessionKey: state.sessionKey, senderId: env.sender.id, channel: env.channel,
    });
    if (hooked.blocked) return refuse(`blocked by hook "${hooked.blocked.by}": ${hooked.blocked.reason}`, `hook:${hooked.blocked.by}`);
    let requirement = hooked.approvalRequired ? { requirement: "prompt" as const, rule: HOOK_RULE } : approvalRequirement(exec.policy.approval, descriptor, subject, false);
    if (requirement.requirement === "prompt" && !hooked.approvalRequired && (await exec.store.hasAlways(alwaysScope(exec, state), action.name))) {
      requirement = approvalRequirement(exec.policy.approval, descriptor, subject, true);
    }
    if (requirement.requirement !== "prompt") {
      await decided(requirement.requirement, "policy", requirement.rule);
      return { allowed: true, rule: requirement.rule };
    }
    await audit({ kind: "approval.requested", tool: action.name, argsHash, source: "question", detail: requirement.rule });
    const answer = await ask(
      {
        kind: "boolean", from: action.from, title: action.summary,
        fields: [{ type: "boolean", name: "approve", label: `Allow ${action.name}?`, required: true }],
      },
      options,
    );
    if (answer.action === "accept" && answer.values.approve === true) {
      await decided("approved", "question", requirement.rule, answer.by);
      return { allowed: true, rule: requirement.rule, by: answer.by };
    }
    if (answer.action === "cancel") {
      await decided("cancelled", "question", answer.reason);
      return { allowed: false, reason: `nobody approved it: ${answer.reason}` };
    }
    if (answer.action === "decline" && !answer.by) {
      await decided("unavailable", "non-interactive", answer.reason);
      return { allowed: false, reason: `no one could be asked to approve it: ${answer.reason}` };
    }
    const by = answer.by!;
    await decided("denied", "question", requirement.rule, by);
    return { allowed: false, reason: `denied by ${by.name ? `${by.name} (${by.id})` : by.id}` };
  };

  const complete = async (request: ToolModelRequest): Promise<ToolModelReply> => {
    const messages: ChatMessage[] = request.system ? [{ role: "system", content: request.system }] : [];
    for (const m of request.messages) messages.push(m.role === "user" ? { role: "user", content: m.content } : { role: "assistant", content: m.content });
    const reply = await exec.model.complete({ messages, tools: [], maxTokens: request.maxTokens, signal: signalWith(request.signal) });
    const model = (await exec.model.describe?.().catch(() => undefined))?.name ?? "unknown";
    const stopped = reply.finishReason === "stop" ? "end" : reply.finishReason === "length" ? "max-tokens" : "other";
    return { text: reply.text, stopped, model };
  };

  return { ask, authorize, complete, audit };
}
