/**
 * Step 2 — parse. Owns the boundary between what the model produced and what the engine
 * runs: native and text-protocol calls become `{ id, name, args }`. Bad JSON, non-object
 * arguments and missing ids become a parse error on the call (reported to the model), never a crash.
 */
import type { RawToolCall } from "../model/types.ts";
import type { ParsedCall } from "./types.ts";

/**
 * Normalizes the model's raw tool calls, in the model's order. `seenIds` holds the ids used so far
 * in the turn: servers that number calls `call_0`, `call_1`… in every reply get fresh ids, so that
 * a result never answers, or overwrites, an earlier call's.
 */
export function parseToolCalls(raw: RawToolCall[], turnId: string, seenIds: Set<string> = new Set()): ParsedCall[] {
  return raw.map((call, index) => {
    let id = call.id && !seenIds.has(call.id) ? call.id : `${turnId}_${seenIds.size}_${index}`;
    while (seenIds.has(id)) id = `${id}_`;
    seenIds.add(id);
    const name = (call.name ?? "").trim();
    const text = (call.arguments ?? "").trim();
    if (text === "") return { id, name, args: {} };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return {
        id,
        name,
        args: {},
        parseError: `the arguments are not valid JSON (${(err as Error).message}); send a JSON object`,
      };
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { id, name, args: {}, parseError: "the arguments must be a JSON object" };
    }
    return { id, name, args: value as Record<string, unknown> };
  });
}
