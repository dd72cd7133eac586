/**
 * Step 6 — loop control, and the turn as a whole. Owns the model ↔ tools loop: the model sees
 * the assistant's tool-call turn and the ordered results, and continues until final text,
 * cancellation, the iteration cap (then one last tool-less call asking for a summary), or a
 * guard that ends the turn. The history it returns never holds a tool call without its result.
 */
import { canonicalJson } from "../observe/receipts.ts";
import { ModelError, type ChatMessage, type ModelReply } from "../model/types.ts";
import { LoopDetector } from "./loop-detector.ts";
import { computeAvailability } from "./availability.ts";
import { parseToolCalls } from "./parse.ts";
import { prepareCalls, type TurnGuards } from "./prepare.ts";
import { dispatchCalls } from "./dispatch.ts";
import { recordResults } from "./record.ts";
import type { ResolvedExecution, TurnOutcome, TurnState } from "./types.ts";

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

/** Runs one turn for one inbound message. Never throws for model or tool failures. */
export async function runTurn(exec: ResolvedExecution, state: TurnState): Promise<TurnOutcome> {
  const log = exec.log.child({ traceId: state.traceId, sessionKey: state.sessionKey });
  const newMessages: ChatMessage[] = [userMessage(state)];
  const conversation: ChatMessage[] = [...state.history, ...newMessages];
  const guards: TurnGuards = { unapprovedPrompts: new Set(), loop: new LoopDetector(exec.policy.loop), callIds: new Set() };
  const finish = (outcome: TurnOutcome): TurnOutcome => {
    exec.observer.emit({ event: "turn.finish", traceId: state.traceId, sessionKey: state.sessionKey, status: outcome.status });
    return outcome;
  };
  const stopped = (): TurnOutcome => {
    const text = "Stopped.";
    newMessages.push({ role: "assistant", content: text });
    return finish({ status: "cancelled", text, newMessages });
  };

  try {
    for (let iteration = 0; iteration < exec.knobs.maxIterations; iteration++) {
      if (state.signal.aborted) return stopped();
      const availability = computeAvailability(exec, state);
      exec.observer.emit({ event: "model.request", traceId: state.traceId, sessionKey: state.sessionKey, iteration, tools: availability.specs.length });
      const asked = performance.now();
      const reply: ModelReply = await exec.model.complete({
        messages: [systemMessage(exec, availability.deferredPrompt), ...conversation],
        tools: availability.specs,
        signal: state.signal,
        onTextDelta: (text) => state.emit({ type: "text.delta", text }),
      });
      exec.observer.emit({
        event: "model.reply", traceId: state.traceId, sessionKey: state.sessionKey, iteration,
        ms: Math.round(performance.now() - asked), toolCalls: reply.toolCalls.length, chars: reply.text.length,
      });
      if (reply.toolCalls.length === 0) {
        const text = reply.text.trim() === "" ? EMPTY_ANSWER : reply.text;
        newMessages.push({ role: "assistant", content: text });
        state.emit({ type: "final", text });
        return finish({ status: "done", text, newMessages });
      }

      const calls = parseToolCalls(reply.toolCalls, state.turnId, guards.callIds);
      const assistant: ChatMessage = {
        role: "assistant",
        content: reply.text.trim() === "" ? null : reply.text,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.parseError ? "{}" : JSON.stringify(c.args) },
        })),
      };
      const prepared = await prepareCalls(exec, state, calls, availability, guards);
      const dispatched = await dispatchCalls(exec, state, prepared);
      for (const d of dispatched) {
        if (d.ran) guards.loop.record({ name: d.call.name, argsCanonical: canonicalJson(d.params) }, d.result.output ?? "");
      }
      const results = await recordResults(exec, state, dispatched);
      newMessages.push(assistant, ...results);
      conversation.push(assistant, ...results);

      if (guards.endTurn) {
        newMessages.push({ role: "assistant", content: guards.endTurn });
        state.emit({ type: "final", text: guards.endTurn });
        return finish({ status: "stopped", text: guards.endTurn, newMessages });
      }
      if (state.signal.aborted) return stopped();
    }

    log.info({ maxIterations: exec.knobs.maxIterations }, "iteration cap reached; asking for a summary");
    state.emit({ type: "notice", text: `⚠️ Reached the limit of ${exec.knobs.maxIterations} steps; summarizing.` });
    const summary = await exec.model.complete({
      messages: [systemMessage(exec), ...conversation, { role: "user", content: SUMMARY_REQUEST }],
      tools: [],
      signal: state.signal,
    });
    const text = summary.text.trim() === "" ? EMPTY_ANSWER : summary.text;
    newMessages.push({ role: "assistant", content: text });
    state.emit({ type: "final", text });
    return finish({ status: "done", text, newMessages });
  } catch (err) {
    if (state.signal.aborted) return stopped();
    const message = err instanceof ModelError ? err.message : "an internal error stopped this request";
    log.error({ err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, "turn failed");
    newMessages.push({ role: "assistant", content: `(This request failed: ${message})` });
    return finish({ status: "failed", text: message, error: message, newMessages });
  }
}
