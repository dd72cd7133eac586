/**
 * Rebuilds one model reply from streamed chunks: text deltas are joined, and tool-call deltas
 * are merged by their index (the id and name arrive in the first delta of a call, the
 * arguments spread over the following ones).
 */
import type { RawToolCall } from "./types.ts";
import type { Completion, CompletionChunk } from "./wire.ts";

/** A reply before any text-protocol parsing: what the endpoint literally said. */
export interface AssembledReply {
  content: string;
  toolCalls: RawToolCall[];
  finishReason: string | null;
}

/** Collects chunks of one streamed completion. */
export class StreamAssembler {
  #content = "";
  #calls = new Map<number, RawToolCall>();
  #finishReason: string | null = null;
  #chunks = 0;

  /** Adds a chunk; returns the text it carried (empty when none). */
  push(chunk: CompletionChunk): string {
    this.#chunks++;
    const choice = chunk.choices[0];
    if (!choice) return "";
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    const text = choice.delta?.content ?? "";
    this.#content += text;
    (choice.delta?.tool_calls ?? []).forEach((delta, position) => {
      const index = delta.index ?? position;
      let call = this.#calls.get(index);
      if (!call) {
        call = { id: "", name: "", arguments: "" };
        this.#calls.set(index, call);
      }
      if (delta.id && !call.id) call.id = delta.id;
      if (delta.function?.name && !call.name) call.name = delta.function.name;
      if (delta.function?.arguments) call.arguments += delta.function.arguments;
    });
    return text;
  }

  /** How many chunks arrived; a stream with none was not a completion at all. */
  get chunkCount(): number {
    return this.#chunks;
  }

  /** The reply so far, tool calls in index order (calls without an id get one). */
  result(): AssembledReply {
    const toolCalls = [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
    return { content: this.#content, toolCalls, finishReason: this.#finishReason };
  }
}

/** The same reply shape from a non-streamed completion. */
export function fromCompletion(completion: Completion): AssembledReply {
  const choice = completion.choices[0];
  const toolCalls = (choice.message.tool_calls ?? []).map((c, index) => ({
    id: c.id || `call_${index}`,
    name: c.function.name,
    arguments: c.function.arguments ?? "",
  }));
  return { content: choice.message.content ?? "", toolCalls, finishReason: choice.finish_reason ?? null };
}
