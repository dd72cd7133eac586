/**
 * Streams in the shapes real OpenAI-compatible servers send (field order, separators, extra fields
 * and quirks as their own issue trackers show them), as `sse` steps for the emulator. The bytes are
 * cut into TCP writes at awkward places — inside `data:`, inside the JSON, between the two line ends
 * of an event, inside a multi-byte character — so a client must reassemble events itself.
 */
import type { Step } from "./steps.ts";

/** A tool call a recorded stream carries; `arguments` goes out verbatim. */
export interface RecordedCall {
  name: string;
  arguments: string;
  id?: string;
}

const encoder = new TextEncoder();

/** Splits text into writes of `every` bytes, plus a cut inside each event separator and each multi-byte character. */
export function tcpWrites(text: string, every = 41): Uint8Array[] {
  const bytes = encoder.encode(text);
  const cuts = new Set<number>();
  for (let at = every; at < bytes.length; at += every) cuts.add(at);
  for (let i = 1; i < bytes.length; i++) {
    // Between "\n" and "\n" (or "\r\n" and "\r\n") of an event's end.
    if (bytes[i - 1] === 0x0a && (bytes[i] === 0x0a || bytes[i] === 0x0d)) cuts.add(i);
    // After the first byte of a multi-byte UTF-8 character.
    if (bytes[i - 1]! >= 0xc0 && (bytes[i]! & 0xc0) === 0x80) cuts.add(i);
  }
  const sorted = [...cuts].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const cut of sorted) {
    out.push(bytes.slice(from, cut));
    from = cut;
  }
  out.push(bytes.slice(from));
  return out;
}

function events(chunks: object[], separator: string, done = true): string {
  return chunks.map((c) => `data: ${JSON.stringify(c)}${separator}`).join("") + (done ? `data: [DONE]${separator}` : "");
}

/** Splits a string into pieces of about `size` characters, as a server streams tokens. */
function pieces(text: string, size = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * Gemini's OpenAI-compatible endpoint: each call of a parallel batch whole in its own chunk, with no
 * `index`, `role` repeated, CRLF event separators, and `finish_reason: "stop"` on the last chunk.
 * `withIds: false` leaves the calls without ids (some proxies in front of it drop them).
 */
export function geminiParallelCalls(calls: RecordedCall[], options: { withIds?: boolean; signatures?: boolean } = {}): Step {
  const base = { object: "chat.completion.chunk", created: 1_760_000_000, model: "gemini-3-pro-preview", id: "Zx3aaLmJC8qD0-kP6_uY8Ak" };
  const chunks = calls.map((call, i) => {
    const extra = options.signatures && i === 0 ? { extra_content: { google: { thought_signature: signatureOf(call) } } } : {};
    const wire = { function: { arguments: call.arguments, name: call.name }, ...(options.withIds === false ? {} : { id: call.id ?? `function-call-${1093385375633916939n + BigInt(i)}` }), type: "function", ...extra };
    return { choices: [{ delta: { role: "assistant", tool_calls: [wire] }, finish_reason: i === calls.length - 1 ? "stop" : null, index: 0 }], ...base };
  });
  return { sse: tcpWrites(events(chunks, "\r\n\r\n")) };
}

/** The thought signature a recorded Gemini reply attaches to `call` (opaque base64 to the client). */
export function signatureOf(call: RecordedCall): string {
  return Buffer.from(`sig:${call.name}:${call.arguments}`).toString("base64");
}

/** Gemini's final answer: text in a few chunks, CRLF separators. */
export function geminiAnswer(text: string): Step {
  const base = { object: "chat.completion.chunk", created: 1_760_000_001, model: "gemini-3-pro-preview", id: "Zx3aaLmJC8qD0-kP6_uY8Bk" };
  const parts = pieces(text, 12);
  const chunks = parts.map((p, i) => ({ choices: [{ delta: { content: p, role: "assistant" }, finish_reason: i === parts.length - 1 ? "stop" : null, index: 0 }], ...base }));
  return { sse: tcpWrites(events(chunks, "\r\n\r\n")) };
}

function deepseekChunk(delta: object, finish: string | null = null, extra: object = {}) {
  return {
    id: "0f6b1c7e-5a57-4c1b-9a39-1d2c5e0b7a11", object: "chat.completion.chunk", created: 1_760_000_100, model: "deepseek-reasoner",
    system_fingerprint: "fp_ffc7281d48_prod0820_fp8_kvcache", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra,
  };
}

/** DeepSeek thinking mode: `reasoning_content` streamed first, then the answer or an indexed tool call, then usage. */
export function deepseekThinking(reasoning: string, reply: { text?: string; call?: RecordedCall }): Step {
  const chunks: object[] = [deepseekChunk({ role: "assistant", content: null, reasoning_content: "" })];
  for (const p of pieces(reasoning)) chunks.push(deepseekChunk({ content: null, reasoning_content: p }));
  if (reply.call) {
    const { call } = reply;
    chunks.push(deepseekChunk({ content: null, reasoning_content: null, tool_calls: [{ index: 0, id: call.id ?? "call_00_Ux5fGmd2pHCTMvs6XbO0lgRK", type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const p of pieces(call.arguments, 5)) chunks.push(deepseekChunk({ content: null, reasoning_content: null, tool_calls: [{ index: 0, function: { arguments: p } }] }));
  }
  for (const p of pieces(reply.text ?? "")) chunks.push(deepseekChunk({ content: p, reasoning_content: null }));
  const usage = { usage: { prompt_tokens: 312, completion_tokens: 98, total_tokens: 410, completion_tokens_details: { reasoning_tokens: 61 } } };
  chunks.push(deepseekChunk({ content: "", reasoning_content: null }, reply.call ? "tool_calls" : "stop", usage));
  return { sse: tcpWrites(events(chunks, "\n\n")) };
}

function ollamaChunk(content: string, finish: string | null = null) {
  return { id: "chatcmpl-812", object: "chat.completion.chunk", created: 1_760_000_200, model: "qwen3:8b", system_fingerprint: "fp_ollama", choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: finish }] };
}

/** Qwen 3 through Ollama's OpenAI API without reasoning parsing: the `<think>` block in the content, its tags as their own tokens. */
export function ollamaThinkInContent(thinking: string, answer: string): Step {
  const tokens = ["<think>", ...pieces(`\n${thinking}\n`), "</think>", "\n\n", ...pieces(answer)];
  const chunks = [...tokens.map((t) => ollamaChunk(t)), ollamaChunk("", "stop")];
  return { sse: tcpWrites(events(chunks, "\n\n"), 23) };
}

function vllmChunk(delta: object, finish: string | null = null) {
  return { id: "chatcmpl-9a1f0c2b3d4e", object: "chat.completion.chunk", created: 1_760_000_300, model: "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
}

/**
 * vllm-mlx on a natural stop (waybarrios/vllm-mlx#628): the last chunk carries `finish_reason: null`,
 * and `[DONE]` alone says the reply is whole.
 */
export function vllmMlxNoFinishReason(reply: { call?: RecordedCall; text?: string }): Step {
  const chunks: object[] = [vllmChunk({ role: "assistant", content: "" })];
  for (const p of pieces(reply.text ?? "")) chunks.push(vllmChunk({ content: p }));
  if (reply.call) {
    const { call } = reply;
    chunks.push(vllmChunk({ tool_calls: [{ index: 0, id: call.id ?? "chatcmpl-tool-7c2d", type: "function", function: { name: call.name, arguments: call.arguments } }] }));
  }
  return { sse: tcpWrites(events(chunks, "\n\n")) };
}

/** A DeepSeek-R1 distill on vLLM without a reasoning parser: the template opened `<think>`, so only `</think>` comes out. */
export function vllmOrphanThinkClose(thinking: string, answer: string): Step {
  const tokens = [...pieces(thinking), "\n", "</think>", "\n\n", ...pieces(answer)];
  const chunks = [vllmChunk({ role: "assistant", content: "" }), ...tokens.map((t) => vllmChunk({ content: t })), vllmChunk({ content: "" }, "stop")];
  return { sse: tcpWrites(events(chunks, "\n\n")) };
}

/**
 * A vLLM stream whose connection dies (no finish reason, no `[DONE]`): after part of a tool call's
 * arguments, or after some answer text.
 */
export function vllmCutShort(reply: { call?: RecordedCall; text?: string }): Step {
  const chunks: object[] = [vllmChunk({ role: "assistant", content: "" })];
  for (const p of pieces(reply.text ?? "")) chunks.push(vllmChunk({ content: p }));
  if (reply.call) {
    const { call } = reply;
    chunks.push(vllmChunk({ tool_calls: [{ index: 0, id: call.id ?? "chatcmpl-tool-5e1f", type: "function", function: { name: call.name } }] }));
    const half = call.arguments.slice(0, Math.ceil(call.arguments.length / 2));
    for (const p of pieces(half, 4)) chunks.push(vllmChunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }));
  }
  // The last event itself is cut in half, as a dying connection leaves it.
  const text = events(chunks, "\n\n", false);
  return { sse: tcpWrites(text + `data: {"id":"chatcmpl-9a1f0c2b3d4e","object":"chat.comp`), cut: true };
}
