/**
 * Rebuilds one model reply from streamed chunks: text deltas are joined, and tool-call deltas are
 * merged into calls. Servers differ in how they mark calls: most number them with `index` (id and
 * name in a call's first delta, the arguments spread over later ones); Gemini sends each call of a
 * parallel batch whole in its own chunk with no index. So a delta continues the call it belongs to
 * unless it carries a new call id, a second name, or a complete call after a complete one — those
 * start a new call. Provider fields (reasoning, thought signatures) are collected on the side.
 */
import { callFieldsOf, mergeProviderFields, messageFieldsOf } from "./provider-fields.ts";
import type { ProviderFields, RawToolCall } from "./types.ts";
import type { Completion, CompletionChunk, ToolCallDelta } from "./wire.ts";

/** A reply before any text-protocol parsing: what the endpoint literally said. */
export interface AssembledReply {
  content: string;
  toolCalls: RawToolCall[];
  finishReason: string | null;
  provider?: ProviderFields;
}

interface CallDraft {
  index?: number;
  id: string;
  name: string;
  arguments: string;
  provider?: ProviderFields;
}

/** Collects chunks of one streamed completion. */
export class StreamAssembler {
  #content = "";
  #calls: CallDraft[] = [];
  #byIndex = new Map<number, CallDraft>();
  #finishReason: string | null = null;
  #provider: ProviderFields | undefined;
  #chunks = 0;

  /** Adds a chunk; returns the text it carried (empty when none). */
  push(chunk: CompletionChunk): string {
    this.#chunks++;
    const choice = chunk.choices[0];
    if (!choice) return "";
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (!delta) return "";
    this.#provider = mergeProviderFields(this.#provider, messageFieldsOf(delta));
    for (const call of delta.tool_calls ?? []) this.#pushCall(call);
    const text = delta.content ?? "";
    this.#content += text;
    return text;
  }

  #pushCall(delta: ToolCallDelta): void {
    const index = delta.index ?? undefined;
    let call = index !== undefined ? this.#byIndex.get(index) : this.#calls.at(-1);
    if (call && !continues(call, delta, index !== undefined)) call = undefined;
    if (!call) {
      call = { index, id: "", name: "", arguments: "" };
      this.#calls.push(call);
      if (index !== undefined) this.#byIndex.set(index, call);
    }
    if (delta.id && !call.id) call.id = delta.id;
    if (delta.function?.name && !call.name) call.name = delta.function.name;
    if (delta.function?.arguments) call.arguments += delta.function.arguments;
    call.provider = mergeProviderFields(call.provider, callFieldsOf(delta));
  }

  /** How many chunks arrived; a stream with none was not a completion at all. */
  get chunkCount(): number {
    return this.#chunks;
  }

  /** True once a chunk said why the reply ended: the reply is whole. A stream cut short never says. */
  get finished(): boolean {
    return this.#finishReason !== null;
  }

  /** The reply so far, tool calls in the model's order (calls without an id get one). */
  result(): AssembledReply {
    const toolCalls = this.#calls.map((call, position): RawToolCall => ({
      id: call.id || `call_${call.index ?? position}`,
      name: call.name,
      arguments: call.arguments,
      ...(call.provider ? { provider: call.provider } : {}),
    }));
    return { content: this.#content, toolCalls, finishReason: this.#finishReason, ...(this.#provider ? { provider: this.#provider } : {}) };
  }
}

/**
 * Whether `delta` goes on with `call` rather than starting the next call. With an index only a
 * different id says so (some servers number every call 0); without one, the delta's shape decides.
 */
function continues(call: CallDraft, delta: ToolCallDelta, indexed: boolean): boolean {
  if (delta.id && call.id) return delta.id === call.id;
  if (indexed) return true;
  const name = delta.function?.name;
  if (name && call.name) return name === call.name && !isWholeJson(call.arguments);
  if (delta.id && !call.id) return !call.name && !call.arguments;
  const args = delta.function?.arguments;
  return !(args && isWholeJson(call.arguments) && isWholeJson(args));
}

function isWholeJson(text: string): boolean {
  if (!text.trim()) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The same reply shape from a non-streamed completion. */
export function fromCompletion(completion: Completion): AssembledReply {
  const choice = completion.choices[0];
  const toolCalls = (choice.message.tool_calls ?? []).map((c, index): RawToolCall => {
    const provider = callFieldsOf(c);
    return { id: c.id || `call_${index}`, name: c.function.name, arguments: c.function.arguments ?? "", ...(provider ? { provider } : {}) };
  });
  const provider = messageFieldsOf(choice.message);
  return { content: choice.message.content ?? "", toolCalls, finishReason: choice.finish_reason ?? null, ...(provider ? { provider } : {}) };
}
