/**
 * The text tool protocol, for models or servers without native tool calling: tools are
 * described in a system message, the model writes `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
 * blocks in its answer, and results go back as `<tool_result>` user messages.
 */
import type { ChatMessage, RawToolCall, ToolSpec } from "./types.ts";

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";

/** The system message that teaches the model the tools and the exact call format. */
export function toolInstructions(tools: ToolSpec[]): ChatMessage {
  const list = tools
    .map((t) => `### ${t.name}\n${t.description}\nJSON schema of the arguments:\n${JSON.stringify(t.parameters)}`)
    .join("\n\n");
  const content = [
    "You can call tools. To call one, write a block in exactly this format, with valid JSON inside:",
    `${OPEN}{"name": "<tool name>", "arguments": {<arguments matching the tool's schema>}}${CLOSE}`,
    "You may write several blocks to call several tools. After the blocks, stop and wait: each result comes back",
    'in a message <tool_result name="…" id="…">…</tool_result>. Do not invent results. When you need no tool,',
    "answer in plain text without any block.",
    "",
    "Available tools:",
    "",
    list,
  ].join("\n");
  return { role: "system", content };
}

/** A model answer split into its plain text and the tool calls written in it. */
export interface ParsedTextReply {
  text: string;
  toolCalls: RawToolCall[];
}

/**
 * Pulls `<tool_call>` blocks out of a model answer. A block with broken JSON still becomes a
 * call (its arguments left as the broken text) so the engine can tell the model what was wrong.
 * A final block left unclosed (the model stopped mid-call) is read up to the end of the text.
 */
export function parseTextToolCalls(content: string, nextId: () => string): ParsedTextReply {
  if (!content.includes(OPEN)) return { text: content, toolCalls: [] };
  const toolCalls: RawToolCall[] = [];
  const outside: string[] = [];
  let rest = content;
  while (rest.length) {
    const start = rest.indexOf(OPEN);
    if (start < 0) {
      outside.push(rest);
      break;
    }
    outside.push(rest.slice(0, start));
    const afterOpen = rest.slice(start + OPEN.length);
    const end = afterOpen.indexOf(CLOSE);
    const inner = end < 0 ? afterOpen : afterOpen.slice(0, end);
    rest = end < 0 ? "" : afterOpen.slice(end + CLOSE.length);
    toolCalls.push({ id: nextId(), ...readCall(inner) });
  }
  const text = outside.join("").replace(/\n{3,}/g, "\n\n").trim();
  return { text, toolCalls };
}

function readCall(inner: string): { name: string; arguments: string } {
  const json = inner.trim().replace(/^```(?:json)?\s*/i, "").replace(/\s*```$/, "");
  try {
    const value: unknown = JSON.parse(json);
    if (value && typeof value === "object" && typeof (value as { name?: unknown }).name === "string") {
      const { name, arguments: args } = value as { name: string; arguments?: unknown };
      // Some models write the arguments already encoded as a string; keep that string as is.
      return { name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) };
    }
  } catch {
    // broken JSON is handled below
  }
  const name = /"name"\s*:\s*"([^"]*)"/.exec(json)?.[1] ?? "";
  const args = /"arguments"\s*:\s*([\s\S]*?)\s*\}?\s*$/.exec(json)?.[1] ?? json;
  return { name, arguments: args };
}

/**
 * Rewrites history for a text-protocol request: assistant tool calls become `<tool_call>`
 * blocks in the assistant text, and tool results become user messages, since the endpoint
 * may not accept the `tool` role.
 */
export function toTextProtocolHistory(messages: ChatMessage[]): ChatMessage[] {
  const names = new Map<string, string>();
  return messages.map((m): ChatMessage => {
    if (m.role === "assistant" && m.tool_calls?.length) {
      const blocks = m.tool_calls.map((c) => {
        names.set(c.id, c.function.name);
        return `${OPEN}${JSON.stringify({ name: c.function.name, arguments: argumentsValue(c.function.arguments) })}${CLOSE}`;
      });
      return { role: "assistant", content: [m.content, ...blocks].filter(Boolean).join("\n") };
    }
    if (m.role === "tool") {
      const name = names.get(m.tool_call_id) ?? "unknown";
      return { role: "user", content: `<tool_result name="${attr(name)}" id="${attr(m.tool_call_id)}">${m.content}</tool_result>` };
    }
    return m;
  });
}

function argumentsValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function attr(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/**
 * Wraps a text-delta callback so streamed `<tool_call>` blocks are not shown as answer text.
 * Text that might be the start of a block is held back until it is known not to be one.
 */
export function hideToolCallBlocks(onText: (text: string) => void): { push(delta: string): void; flush(): void } {
  let buffer = "";
  let inside = false;
  const emit = (s: string) => {
    if (s) onText(s);
  };
  const drain = () => {
    for (;;) {
      if (inside) {
        const end = buffer.indexOf(CLOSE);
        if (end < 0) {
          buffer = buffer.slice(Math.max(0, buffer.length - (CLOSE.length - 1)));
          return;
        }
        buffer = buffer.slice(end + CLOSE.length);
        inside = false;
        continue;
      }
      const start = buffer.indexOf(OPEN);
      if (start >= 0) {
        emit(buffer.slice(0, start));
        buffer = buffer.slice(start + OPEN.length);
        inside = true;
        continue;
      }
      const keep = partialTagLength(buffer, OPEN);
      emit(buffer.slice(0, buffer.length - keep));
      buffer = buffer.slice(buffer.length - keep);
      return;
    }
  };
  return {
    push(delta) {
      buffer += delta;
      drain();
    },
    flush() {
      if (!inside) emit(buffer);
      buffer = "";
    },
  };
}

/** Length of the longest end of `text` that could be the beginning of `tag` (held back while streaming). */
export function partialTagLength(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
