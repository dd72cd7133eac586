/**
 * Provider fields: what a model server adds to a reply that Gatehouse does not read but must send
 * back — DeepSeek's `reasoning_content` on a tool-call message (the next request is refused with 400
 * without it), Gemini's `extra_content` thought signature on a tool call (400 "Function call is
 * missing a thought_signature"), OpenRouter's `reasoning_details`. They are collected from the
 * reply, stored on the assistant message (`provider`), and sent back exactly as received. A history
 * that lacks them (written before, or by another model) is repaired for one retry instead of
 * breaking every later request of the session.
 */
import { APIError } from "openai";
import type { ChatMessage, ModelReply, ProviderFields, ToolCallMessagePart } from "./types.ts";
import { isRecord } from "./wire.ts";

/** Reply-message fields providers need back (reasoning, signatures); other extra fields are per-chunk noise. */
const MESSAGE_FIELDS = ["reasoning_content", "reasoning", "reasoning_details", "extra_content"] as const;

/** The fields of a tool call every server has; anything else on a call is the provider's. */
const STANDARD_CALL_FIELDS = new Set(["index", "id", "type", "function"]);

/** Streamed text pieces: joined across chunks rather than replaced. */
const STREAMED_TEXT = new Set(["reasoning_content", "reasoning", "text", "summary"]);

/** The provider fields of a reply message or a streamed delta of it. */
export function messageFieldsOf(message: Record<string, unknown>): ProviderFields | undefined {
  const fields: ProviderFields = {};
  for (const key of MESSAGE_FIELDS) if (message[key] != null) fields[key] = message[key];
  return Object.keys(fields).length ? fields : undefined;
}

/** The provider fields of a tool call or a streamed delta of it. */
export function callFieldsOf(call: Record<string, unknown>): ProviderFields | undefined {
  const fields: ProviderFields = {};
  for (const [key, value] of Object.entries(call)) if (!STANDARD_CALL_FIELDS.has(key) && value != null) fields[key] = value;
  return Object.keys(fields).length ? fields : undefined;
}

/**
 * Adds one chunk's fields to what earlier chunks gave: reasoning text is joined, list items with
 * the same `index` are merged, objects merged key by key, anything else replaced by the newer value.
 */
export function mergeProviderFields(into: ProviderFields | undefined, piece: ProviderFields | undefined): ProviderFields | undefined {
  if (!piece) return into;
  return mergeValue("", into ?? {}, piece) as ProviderFields;
}

function mergeValue(key: string, old: unknown, next: unknown): unknown {
  if (next == null) return old;
  if (old == null) return structuredClone(next);
  if (typeof old === "string" && typeof next === "string") return STREAMED_TEXT.has(key) ? old + next : next;
  if (Array.isArray(old) && Array.isArray(next)) {
    const out = [...old];
    for (const item of next) {
      const at = indexOf(item) === undefined ? -1 : out.findIndex((o) => indexOf(o) === indexOf(item));
      if (at >= 0) out[at] = mergeValue("", out[at], item);
      else out.push(structuredClone(item));
    }
    return out;
  }
  if (isRecord(old) && isRecord(next)) {
    const out: Record<string, unknown> = { ...old };
    for (const [k, v] of Object.entries(next)) out[k] = mergeValue(k, out[k], v);
    return out;
  }
  return structuredClone(next);
}

function indexOf(item: unknown): number | undefined {
  return isRecord(item) && typeof item.index === "number" ? item.index : undefined;
}

/**
 * The assistant tool-call message the engine stores, with the reply's provider fields on it (the
 * message's, and each call's by position: the engine keeps the model's calls in the model's order).
 */
export function withProviderFields(assistant: ChatMessage, reply: ModelReply): ChatMessage {
  if (assistant.role !== "assistant") return assistant;
  const calls = assistant.tool_calls?.map((call, i): ToolCallMessagePart => {
    const provider = reply.toolCalls[i]?.provider;
    return provider ? { ...call, provider } : call;
  });
  return { ...assistant, ...(calls ? { tool_calls: calls } : {}), ...(reply.provider ? { provider: reply.provider } : {}) };
}

/**
 * Messages as they go on the wire: provider fields back in the places they came from (or left
 * out, `include` false), and Gatehouse's own `provider` key never sent.
 */
export function toWireMessages(messages: ChatMessage[], include: boolean): Array<Record<string, unknown>> {
  return messages.map((m) => {
    if (m.role !== "assistant") return { ...m };
    const { provider, tool_calls, ...rest } = m;
    const calls = tool_calls?.map(({ provider: callFields, ...call }) => (include && callFields ? { ...callFields, ...call } : call));
    return { ...(include ? provider : undefined), ...rest, ...(calls ? { tool_calls: calls } : {}) };
  });
}

/** What a 400 says about provider fields: some are required and absent, or the server takes none. */
export type ProviderFieldComplaint = "missing" | "unexpected";

/** Reads a refusal that is about provider fields (a missing thought signature or reasoning, or an unknown field). */
export function providerFieldComplaint(error: unknown): ProviderFieldComplaint | undefined {
  if (!(error instanceof APIError) || error.status !== 400) return undefined;
  const text = error.message;
  if (!/thought[_ ]?signature|reasoning_content|reasoning_details|extra_content|'reasoning'|"reasoning"/i.test(text)) return undefined;
  if (/unexpected|unrecogni[sz]ed|not (allowed|permitted|supported)|unknown|extra (fields|inputs)|additional propert/i.test(text)) return "unexpected";
  if (/missing|required|must|absent|without/i.test(text)) return "missing";
  return undefined;
}

/** True when the assistant tool-call message carries no provider field at all. */
function unsigned(m: ChatMessage): boolean {
  return m.role === "assistant" && !!m.tool_calls?.length && !m.provider && !m.tool_calls.some((c) => c.provider);
}

/** True when any message of the history holds an unsigned tool-call exchange. */
export function hasUnsignedToolTurns(messages: ChatMessage[]): boolean {
  return messages.some(unsigned);
}

/**
 * Rewrites each tool-call exchange without provider fields (from before they were kept, or from
 * another model) as plain text: the calls as an assistant message, the results as a user message.
 * A provider that insists on its fields accepts this history, and the model still reads what happened.
 */
export function flattenUnsignedToolTurns(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  const names = new Map<string, string>();
  let results: string[] | undefined;
  const closeResults = () => {
    if (results?.length) out.push({ role: "user", content: results.join("\n\n") });
    results = undefined;
  };
  for (const m of messages) {
    if (m.role === "tool" && results && names.has(m.tool_call_id)) {
      results.push(`[result of ${names.get(m.tool_call_id)}]\n${m.content}`);
      continue;
    }
    closeResults();
    if (m.role === "assistant" && unsigned(m)) {
      const calls = m.tool_calls!.map((c) => {
        names.set(c.id, c.function.name);
        return `[called ${c.function.name} ${c.function.arguments}]`;
      });
      out.push({ role: "assistant", content: [m.content, ...calls].filter(Boolean).join("\n") });
      results = [];
      continue;
    }
    out.push(m);
  }
  closeResults();
  return out;
}
