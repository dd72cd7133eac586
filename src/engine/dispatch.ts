/**
 * Step 4 — dispatch. Owns running the prepared calls: in parallel only when the knob is on, more
 * than one call is runnable, none needed a person and none is tool_search; otherwise in order,
 * checking cancellation before each call. Finished calls keep their real results; calls not
 * started when the turn is stopped get an "interrupted" result. Before a call starts, the turn's
 * checkpoint says it runs, so that a restart never runs it twice: it is reported interrupted.
 */
import type { AnyTool, ToolResult } from "../tools/tool.ts";
import { synthetic } from "./synthetic.ts";
import { toolRequests } from "./tool-requests.ts";
import type { PreparedCall } from "./prepare.ts";
import type { ResolvedExecution, TurnState } from "./types.ts";

export interface DispatchedCall extends PreparedCall {
  result: ToolResult;
  /** How long the tool ran; 0 for calls that did not run. */
  ms: number;
  ran: boolean;
}

/** Where a batch's dispatch stands, saved in the turn's checkpoint. */
export interface DispatchProgress {
  /** Results so far, by position in the batch. */
  done: Array<DispatchedCall | null>;
  /** Positions of calls started and not finished. */
  running: number[];
}

/** Tools by name for this turn (the availability computed for it); undefined when no longer offered. */
export type ToolLookup = (name: string) => AnyTool | undefined;

async function runOne(exec: ResolvedExecution, state: TurnState, p: PreparedCall, toolOf: ToolLookup): Promise<DispatchedCall> {
  if (p.result) return { ...p, result: p.result, ms: 0, ran: false };
  if (state.signal.aborted) return { ...p, result: synthetic.interrupted(p.call.name), ms: 0, ran: false };
  const tool = toolOf(p.call.name);
  if (!tool) return { ...p, result: synthetic.noLongerOffered(p.call.name), ms: 0, ran: false };
  let hint: string | undefined;
  try {
    hint = tool.hint?.(p.params);
  } catch {
    hint = undefined;
  }
  state.emit({ type: "tool.start", callId: p.call.id, tool: tool.name, hint });
  exec.observer.emit({ event: "tool.start", traceId: state.traceId, sessionKey: state.sessionKey, tool: tool.name, callId: p.call.id });
  const started = performance.now();
  let result: ToolResult;
  let log: ResolvedExecution["log"] | undefined;
  try {
    result = await tool.execute(p.params, {
      signal: state.signal,
      workspace: exec.knobs.workspace,
      sessionKey: state.sessionKey,
      senderId: state.envelope.sender.id,
      // Made when the tool first logs: most calls never do.
      get log() {
        return (log ??= exec.log.child({ traceId: state.traceId, tool: tool.name }));
      },
      onProgress: (text) => state.emit({ type: "tool.progress", callId: p.call.id, tool: tool.name, text }),
      ...toolRequests(exec, state, { id: p.call.id, tool: tool.name }),
    });
    if (!result || typeof result.success !== "boolean") {
      result = { success: false, output: "", error: `${tool.name} returned no result` };
    }
  } catch (err) {
    result = { success: false, output: "", error: `${tool.name} failed: ${(err as Error)?.message ?? String(err)}` };
  }
  if (state.signal.aborted && !result.success) {
    result = { success: false, output: result.output, error: `${tool.name} was interrupted while it ran: the turn was stopped` };
  }
  const ms = Math.round(performance.now() - started);
  exec.observer.emit({
    event: "tool.finish", traceId: state.traceId, sessionKey: state.sessionKey, tool: tool.name, callId: p.call.id, ms,
    success: result.success, error: result.success ? undefined : result.error,
  });
  return { ...p, result, ms, ran: true };
}

/** Whether this batch may run in parallel under the rule above. */
export function mayRunInParallel(exec: ResolvedExecution, prepared: PreparedCall[]): boolean {
  const runnable = prepared.filter((p) => !p.result);
  return (
    exec.knobs.parallelTools &&
    runnable.length > 1 &&
    !prepared.some((p) => p.prompted) &&
    !prepared.some((p) => p.call.name === "tool_search")
  );
}

/**
 * Runs a prepared batch; the result array keeps the model's order. `progress` holds what a
 * previous process finished (a turn resumed after a restart); `save` is called with the
 * progress before calls start, so the checkpoint knows what was running (not before a replayable
 * call: a crash runs that again rather than report it interrupted). Undefined when the
 * bot started shutting down between two calls (the turn then parks).
 */
export async function dispatchCalls(
  exec: ResolvedExecution,
  state: TurnState,
  prepared: PreparedCall[],
  toolOf: ToolLookup,
  progress: DispatchProgress = { done: [], running: [] },
  save: (progress: DispatchProgress) => Promise<void> = async () => {},
): Promise<DispatchedCall[] | undefined> {
  // Calls that were running when the previous process stopped: their outcome is unknown, never run them twice.
  for (const i of progress.running) {
    const p = prepared[i];
    if (p && !progress.done[i]) progress.done[i] = { ...p, result: synthetic.interruptedByRestart(p.call.name), ms: 0, ran: false };
  }
  progress.running = [];
  const pending = prepared.map((p, i) => ({ p, i })).filter(({ i }) => !progress.done[i]);
  if (mayRunInParallel(exec, pending.map(({ p }) => p))) {
    progress.running = pending.filter(({ p }) => !p.result).map(({ i }) => i);
    // What may simply run again needs no mark: a crash replays it (see Tool.replayable).
    if (pending.some(({ p }) => !p.result && toolOf(p.call.name)?.replayable !== true)) await save(progress);
    const results = await Promise.all(pending.map(({ p }) => runOne(exec, state, p, toolOf)));
    pending.forEach(({ i }, k) => (progress.done[i] = results[k]!));
    progress.running = [];
  } else {
    for (const { p, i } of pending) {
      // Shutting down: stop at this boundary; the checkpoint holds what finished.
      if (!p.result && state.draining?.()) return undefined;
      if (!p.result && !state.signal.aborted) {
        progress.running = [i];
        if (toolOf(p.call.name)?.replayable !== true) await save(progress);
      }
      progress.done[i] = await runOne(exec, state, p, toolOf);
      progress.running = [];
    }
  }
  return prepared.map((p, i) => progress.done[i] ?? { ...p, result: synthetic.interrupted(p.call.name), ms: 0, ran: false });
}
