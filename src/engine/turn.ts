/**
 * Step 6 — loop control, and the turn as a whole. Owns the model ↔ tools loop: the model sees
 * the assistant's tool-call turn and the ordered results, and continues until final text,
 * cancellation, the iteration cap (then one last tool-less call asking for a summary), or a
 * guard that ends the turn. The history it returns never holds a tool call without its result.
 *
 * The turn is a resumable state machine over its TurnRecord (turn-record.ts): a call that needs
 * a person parks it (the record is saved, the turn returns `parked`), and `resumeTurn` continues
 * it from the record with the decision — in this process or in one started after a restart. Each
 * step boundary (a model reply in hand, a call about to run, a batch recorded) is a checkpoint.
 */
import { canonicalJson, outputHash } from "../observe/receipts.ts";
import { ModelError, type ChatMessage, type ModelReply } from "../model/types.ts";
import { withProviderFields } from "../model/provider-fields.ts";
import { LoopDetector } from "./loop-detector.ts";
import { availabilityAgain, computeAvailability, type Availability } from "./availability.ts";
import { parseToolCalls } from "./parse.ts";
import { prepareCall, preparedAfterDecision, type TurnGuards } from "./prepare.ts";
import { dispatchCalls } from "./dispatch.ts";
import { PendingReceipts, recordResults } from "./record.ts";
import { applyDecision } from "./approval-gate.ts";
import { encodeTurnRecord, TURN_RECORD_VERSION, type TurnRecord } from "./turn-record.ts";
import { StaleLeaseError } from "../store/store.ts";
import { PromptFitter } from "./fit-prompt.ts";
import type { ApprovalDecision } from "../approval/types.ts";
import type { ParkedOutcome, ResolvedExecution, TurnOutcome, TurnResult, TurnState } from "./types.ts";

const EMPTY_ANSWER = "(The model returned an empty answer. Try rephrasing, or check the model endpoint.)";
const SUMMARY_REQUEST =
  "You have reached the limit of tool calls for this request. Do not call tools. Summarize what you did, what you found, and what is left to do.";

function userMessage(state: TurnState): ChatMessage {
  const env = state.envelope;
  const who = env.sender.name ?? env.sender.id;
  return { role: "user", content: env.conversation.kind === "dm" ? env.text : `[${who}] ${env.text}` };
}

function systemMessage(exec: ResolvedExecution, deferredPrompt?: string): ChatMessage {
  return { role: "system", content: deferredPrompt ? `${exec.knobs.systemPrompt}\n\n${deferredPrompt}` : exec.knobs.systemPrompt };
}

/**
 * The system message of a turn's requests: the same object while its text stays the same, so the
 * prompt meter counts it once per turn (it keeps counts by message object).
 */
function systemMessages(exec: ResolvedExecution): (deferredPrompt?: string) => ChatMessage {
  let last: { deferredPrompt?: string; message: ChatMessage } | undefined;
  return (deferredPrompt) => {
    if (!last || last.deferredPrompt !== deferredPrompt) last = { deferredPrompt, message: systemMessage(exec, deferredPrompt) };
    return last.message;
  };
}

/** Thrown when a replica finds at a checkpoint that another one took its session over. */
export class LeaseLostError extends Error {
  constructor(turnId: string) {
    super(`turn ${turnId}: this replica no longer owns the session`);
    this.name = "LeaseLostError";
  }
}

/** Runs one turn for one inbound message. Never throws for model or tool failures. */
export async function runTurn(exec: ResolvedExecution, state: TurnState): Promise<TurnResult> {
  const record: TurnRecord = {
    version: TURN_RECORD_VERSION, turnId: state.turnId, traceId: state.traceId, sessionKey: state.sessionKey,
    envelope: state.envelope, startedAt: Date.now(), newMessages: [userMessage(state)], iteration: 0,
    guards: { unapprovedPrompts: [], loop: [], callIds: [] },
  };
  return advance(exec, state, record, undefined, false);
}

/**
 * Continues a turn from its record: a parked turn with the decision on its waiting call, or a
 * checkpoint left by a process that stopped. `state.history` is the session's history without
 * this turn's messages (they are in the record).
 */
export async function resumeTurn(exec: ResolvedExecution, state: TurnState, record: TurnRecord, decision?: ApprovalDecision): Promise<TurnResult> {
  return advance(exec, state, record, decision, true);
}

/**
 * Runs the turn from `record` to its end or its next park. `stored`: the store holds a record of
 * this turn (it was resumed from one); a new turn has none until its first checkpoint.
 */
async function advance(exec: ResolvedExecution, state: TurnState, record: TurnRecord, decision: ApprovalDecision | undefined, stored: boolean): Promise<TurnResult> {
  // The turn's own lines are few (the cap, a failure): its child logger is made for the first.
  let turnLog: ResolvedExecution["log"] | undefined;
  const log = () => (turnLog ??= exec.log.child({ traceId: state.traceId, sessionKey: state.sessionKey }));
  const { newMessages } = record;
  const guards: TurnGuards = {
    unapprovedPrompts: new Set(record.guards.unapprovedPrompts),
    loop: new LoopDetector(exec.policy.loop, record.guards.loop),
    callIds: new Set(record.guards.callIds),
    endTurn: record.guards.endTurn,
  };
  // Each request is measured and fitted into the model's window; a "too long" refusal compacts and retries once.
  const fitter = new PromptFitter(exec, state);
  const draining = () => state.draining?.() === true;
  // Receipts of calls that ran since the last write: they go into the store with the next
  // checkpoint or with the turn's end, in the same transaction (a crash loses only those of calls
  // that run again after the restart, as nothing holds their results either).
  const unsaved = new PendingReceipts(exec.receipts, (signed) =>
    exec.observer.emit({
      event: "receipts.signed", traceId: state.traceId, sessionKey: state.sessionKey,
      receipts: signed.map((r) => ({ callId: r.callId, tool: r.tool, receipt: r.id })),
    }));
  const save = async () => {
    record.guards = { unapprovedPrompts: [...guards.unapprovedPrompts], loop: guards.loop.snapshot(), callIds: [...guards.callIds], endTurn: guards.endTurn };
    try {
      await exec.store.saveTurn(encodeTurnRecord(record), unsaved.take(), state.lease);
    } catch (err) {
      throw err instanceof StaleLeaseError ? new LeaseLostError(record.turnId) : err;
    }
    stored = true;
  };
  const park = async (reason: ParkedOutcome["reason"], persist = true): Promise<ParkedOutcome> => {
    // Parking "at the last checkpoint" needs one: a turn that skipped them all (replayable calls only) saves now.
    if (persist || !stored) await save();
    else await exec.store.saveReceipts(unsaved.take());
    const waiting = record.batch?.waiting;
    const tool = waiting ? record.batch!.calls[waiting.index]?.name : undefined;
    exec.observer.emit({ event: "turn.parked", traceId: state.traceId, sessionKey: state.sessionKey, reason, approvalId: waiting?.approvalId, tool });
    return { status: "parked", reason, turnId: record.turnId, approvalId: waiting?.approvalId, tool };
  };
  const finish = async (outcome: TurnOutcome): Promise<TurnOutcome> => {
    // The driver ends the turn in one write (Store.finishTurn), receipts included.
    if (state.endsInStore) {
      outcome.receipts = unsaved.take();
      outcome.checkpointed = stored;
    }
    else {
      await exec.store.saveReceipts(unsaved.take());
      if (stored) await exec.store.deleteTurn(record.turnId);
    }
    exec.observer.emit({ event: "turn.finish", traceId: state.traceId, sessionKey: state.sessionKey, status: outcome.status });
    return outcome;
  };
  // Stopped by /stop; while shutting down, the turn parks at its last checkpoint instead.
  const stopped = async (): Promise<TurnResult> => {
    if (draining()) return park("shutdown", false);
    const text = "Stopped.";
    newMessages.push({ role: "assistant", content: text });
    return finish({ status: "cancelled", text, newMessages });
  };
  const answer = async (text: string, status: TurnOutcome["status"]): Promise<TurnOutcome> => {
    newMessages.push({ role: "assistant", content: text });
    state.emit({ type: "final", text });
    return finish({ status, text, newMessages });
  };

  const system = systemMessages(exec);
  let offeredNow: Availability | undefined;
  let offeredLast: Availability | undefined;
  try {
    await exec.activation?.restore?.(state.sessionKey);
    for (;;) {
      if (!record.batch) {
        if (state.signal.aborted) return await stopped();
        if (draining()) return await park("shutdown");
        if (record.iteration >= exec.knobs.maxIterations) break;
        const availability = availabilityAgain(exec, state, offeredLast);
        offeredNow = offeredLast = availability;
        const iteration = record.iteration;
        exec.observer.emit({ event: "model.request", traceId: state.traceId, sessionKey: state.sessionKey, iteration, tools: availability.specs.length });
        const asked = performance.now();
        const reply: ModelReply = await fitter.complete({
          system: system(availability.deferredPrompt),
          turn: newMessages,
          tools: availability.specs,
          signal: state.signal,
        });
        exec.observer.emit({
          event: "model.reply", traceId: state.traceId, sessionKey: state.sessionKey, iteration,
          ms: Math.round(performance.now() - asked), toolCalls: reply.toolCalls.length, chars: reply.text.length,
        });
        if (reply.toolCalls.length === 0) return await answer(reply.text.trim() === "" ? EMPTY_ANSWER : reply.text, "done");

        const calls = parseToolCalls(reply.toolCalls, state.turnId, guards.callIds);
        const assistant: ChatMessage = withProviderFields({
          role: "assistant",
          content: reply.text.trim() === "" ? null : reply.text,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.parseError ? "{}" : JSON.stringify(c.args) },
          })),
        }, reply);
        record.batch = { assistant, calls, prepared: [], decided: {}, firstOfKind: {} };
        if (draining()) return await park("shutdown");
      }

      const batch = record.batch;
      // The batch runs against what was offered for its request (computed again for a resumed turn).
      const availability = offeredNow ?? computeAvailability(exec, state);
      offeredNow = undefined;
      if (batch.waiting) {
        const waiting = batch.waiting;
        const call = batch.calls[waiting.index]!;
        if (!decision) return await park("approval", false);
        const gate = await applyDecision(exec, state, { id: call.id, tool: call.name, params: waiting.params, argsHash: waiting.argsHash }, waiting.rule, decision);
        batch.prepared.push(preparedAfterDecision(exec, call, waiting, gate, guards, batch));
        batch.waiting = undefined;
        decision = undefined;
      }
      while (batch.prepared.length < batch.calls.length) {
        const index = batch.prepared.length;
        const step = await prepareCall(exec, state, batch.calls[index]!, availability, guards, batch);
        if (step.kind === "waiting") {
          batch.waiting = { index, ...step.waiting };
          return await park("approval");
        }
        batch.prepared.push(step.prepared);
      }

      batch.dispatch ??= { done: [], running: [] };
      const dispatched = await dispatchCalls(exec, state, batch.prepared, (name) => availability.offered.get(name), batch.dispatch, save);
      if (!dispatched) return await park("shutdown");
      if (state.signal.aborted && draining()) return await park("shutdown", false);
      // Each output is hashed once: for the loop detector and for the receipt.
      const outputHashes = dispatched.map((d) => (d.ran ? outputHash(d.result.output ?? "") : undefined));
      dispatched.forEach((d, i) => {
        if (d.ran) guards.loop.record({ name: d.call.name, argsCanonical: d.argsCanonical ?? canonicalJson(d.params) }, d.result.output ?? "", outputHashes[i]);
      });
      const results = await recordResults(exec, state, dispatched, unsaved, outputHashes);
      newMessages.push(batch.assistant, ...results);
      record.batch = undefined;
      record.iteration++;

      if (guards.endTurn) return await answer(guards.endTurn, "stopped");
      if (state.signal.aborted) return await stopped();
      // A batch of calls that may simply run again (reads of local state) needs no checkpoint: a
      // crash before the next one replays it from the last one. Anything else is saved here.
      if (!dispatched.every((d) => availability.offered.get(d.call.name)?.replayable === true)) await save();
    }

    log().info({ maxIterations: exec.knobs.maxIterations }, "iteration cap reached; asking for a summary");
    state.emit({ type: "notice", text: `⚠️ Reached the limit of ${exec.knobs.maxIterations} steps; summarizing.` });
    const summary = await fitter.complete({
      system: systemMessage(exec),
      turn: [...newMessages, { role: "user", content: SUMMARY_REQUEST }],
      tools: [],
      signal: state.signal,
    });
    return await answer(summary.text.trim() === "" ? EMPTY_ANSWER : summary.text, "done");
  } catch (err) {
    if (err instanceof LeaseLostError) throw err;
    if (state.signal.aborted) return stopped();
    const message = err instanceof ModelError ? err.message : "an internal error stopped this request";
    log().error({ err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, "turn failed");
    newMessages.push({ role: "assistant", content: `(This request failed: ${message})` });
    return finish({ status: "failed", text: message, error: message, newMessages });
  }
}
