/**
 * Step 4 — dispatch. Owns running the prepared calls: in parallel only when the knob is on, more
 * than one call is runnable, none needed a person and none is tool_search; otherwise in order,
 * checking cancellation before each call. Finished calls keep their real results; calls not
 * started when the turn is stopped get an "interrupted" result.
 */
import type { ToolResult } from "../tools/tool.ts";
import { synthetic } from "./synthetic.ts";
import type { PreparedCall } from "./prepare.ts";
import type { ResolvedExecution, TurnState } from "./types.ts";

export interface DispatchedCall extends PreparedCall {
  result: ToolResult;
  /** How long the tool ran; 0 for calls that did not run. */
  ms: number;
  ran: boolean;
}

async function runOne(exec: ResolvedExecution, state: TurnState, p: PreparedCall): Promise<DispatchedCall> {
  if (p.result) return { ...p, result: p.result, ms: 0, ran: false };
  if (state.signal.aborted) return { ...p, result: synthetic.interrupted(p.call.name), ms: 0, ran: false };
  const tool = p.tool!;
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
  try {
    result = await tool.execute(p.params, {
      signal: state.signal,
      workspace: exec.knobs.workspace,
      sessionKey: state.sessionKey,
      senderId: state.envelope.sender.id,
      log: exec.log.child({ traceId: state.traceId, tool: tool.name }),
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

/** Runs a prepared batch; the result array keeps the model's order. */
export async function dispatchCalls(exec: ResolvedExecution, state: TurnState, prepared: PreparedCall[]): Promise<DispatchedCall[]> {
  if (mayRunInParallel(exec, prepared)) {
    return Promise.all(prepared.map((p) => runOne(exec, state, p)));
  }
  const out: DispatchedCall[] = [];
  for (const p of prepared) out.push(await runOne(exec, state, p));
  return out;
}
