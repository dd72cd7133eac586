/**
 * Text-protocol tool calls inside a native reply. Some local models, offered native tools,
 * still write `<tool_call>{…}</tool_call>` blocks into their answer text. In `auto` mode those
 * blocks are read as calls (the engine refuses unknown tools and reports broken ones to the
 * model, as in text mode), and they never reach the person as raw text.
 */
import type { AssembledReply } from "./stream-assembler.ts";
import { parseTextToolCalls } from "./text-protocol.ts";
import type { ModelReply } from "./types.ts";

/**
 * A `<tool_call>` tag followed by a JSON object (optionally in a code fence): a call attempt,
 * as opposed to prose that merely names the tag.
 */
const CALL_BLOCK = /<tool_call>\s*(?:```(?:json)?\s*)?\{/;

/** Whether an answer text holds at least one text-protocol call attempt. */
export function holdsTextToolCall(content: string): boolean {
  return CALL_BLOCK.test(content);
}

/**
 * Turns a native reply into the reply the engine sees: blocks in the text become calls when the
 * model made no native call; when it did, the blocks only echo those calls and are dropped, so
 * nothing runs twice.
 */
export function withStrayTextCalls(assembled: AssembledReply, nextId: () => string): ModelReply {
  const { content, toolCalls, finishReason, provider } = assembled;
  const fields = provider ? { provider } : {};
  if (!holdsTextToolCall(content)) return { text: content, toolCalls, finishReason, ...fields };
  const parsed = parseTextToolCalls(content, nextId);
  return { text: parsed.text, toolCalls: toolCalls.length ? toolCalls : parsed.toolCalls, finishReason, ...fields };
}
