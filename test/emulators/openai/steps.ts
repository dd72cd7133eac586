/**
 * What the OpenAI-compatible emulator can be told to answer (a `Step`), and how a step turns
 * into a Chat Completions body or a stream of `chat.completion.chunk` objects in the real
 * API's shape.
 */
import { randomBytes } from "node:crypto";

/** A native tool call the emulated model makes; `arguments` is sent verbatim, so it may be broken JSON. */
export interface ScriptedToolCall {
  name: string;
  arguments: string;
  id?: string;
}

/** A text-protocol tool call, written into the content as `<tool_call>{...}</tool_call>`. */
export interface ScriptedTextToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** One scripted answer of the emulated model (or failure of the endpoint). */
export type Step =
  | { text: string }
  | { toolCalls: ScriptedToolCall[]; text?: string }
  | { textToolCalls: ScriptedTextToolCall[]; text?: string }
  /**
   * An error answer; `code` is the error body's code (e.g. `context_length_exceeded`). With `html`,
   * the body is that page instead, as a proxy in front of the server answers (nginx, Cloudflare).
   */
  | { status: number; retryAfter?: number; message?: string; code?: string; html?: string }
  /** Never finishes; when streamed with `afterText`, sends that text first and then goes silent. */
  | { hang: true; afterText?: string }
  | { garbage: true; body?: string; contentType?: string }
  | { empty: true }
  /**
   * A stream sent byte for byte: each element is one TCP write, so an event (or a UTF-8 character)
   * can arrive split. With `cut`, the connection is destroyed after the last write (no `[DONE]`).
   * See recorded.ts for streams in the shapes real servers send.
   */
  | { sse: Array<string | Uint8Array>; cut?: boolean };

/** A tool call as it appears in an assistant message. */
interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** What a successful step says, independent of streaming. */
export interface AssistantTurn {
  content: string | null;
  toolCalls: WireToolCall[];
  finishReason: "stop" | "tool_calls";
}

/** Reduces a success step to the assistant message it stands for. */
export function assistantTurnFor(step: Step): AssistantTurn {
  if ("toolCalls" in step) {
    return {
      content: step.text ?? null,
      toolCalls: step.toolCalls.map((c) => ({
        id: c.id ?? `call_${randomBytes(6).toString("hex")}`,
        type: "function",
        function: { name: c.name, arguments: c.arguments },
      })),
      finishReason: "tool_calls",
    };
  }
  if ("textToolCalls" in step) {
    const blocks = step.textToolCalls.map((c) => `<tool_call>${JSON.stringify({ name: c.name, arguments: c.arguments })}</tool_call>`);
    return { content: [step.text, ...blocks].filter(Boolean).join("\n"), toolCalls: [], finishReason: "stop" };
  }
  if ("text" in step) return { content: step.text, toolCalls: [], finishReason: "stop" };
  return { content: null, toolCalls: [], finishReason: "stop" };
}

/** The error body the real API sends with a non-2xx status. */
export function errorBody(message: string, type: string, code: string | null = null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/** A non-streamed `chat.completion` object. */
export function completionBody(turn: AssistantTurn, model: string): string {
  const message: Record<string, unknown> = { role: "assistant", content: turn.content, refusal: null };
  if (turn.toolCalls.length) message.tool_calls = turn.toolCalls;
  return JSON.stringify({
    id: `chatcmpl-${randomBytes(8).toString("hex")}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: turn.finishReason }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}

/** Splits text into a few pieces, so a client must join streamed deltas. */
export function splitIntoPieces(text: string, pieces = 3): string[] {
  if (text.length < 2) return [text];
  const size = Math.max(1, Math.ceil(text.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * The `chat.completion.chunk` objects for a turn, as the real API streams them: a role delta,
 * content in pieces, then each tool call with its id and name only in its first delta and its
 * arguments spread over later deltas, then a finish chunk.
 */
export function completionChunks(turn: AssistantTurn, model: string): object[] {
  const id = `chatcmpl-${randomBytes(8).toString("hex")}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: object, finishReason: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    system_fingerprint: "fp_emulator",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const chunks: object[] = [chunk({ role: "assistant", content: "", refusal: null })];
  if (turn.content) for (const piece of splitIntoPieces(turn.content)) chunks.push(chunk({ content: piece }));
  turn.toolCalls.forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }));
    for (const piece of splitIntoPieces(call.function.arguments)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, turn.finishReason));
  return chunks;
}
