/**
 * A tiny stand-in model for trying Gatehouse without a real one: asks for the time with
 * `current_time`, runs `run <command>` with `shell`, quotes the last tool result once results
 * come back, and otherwise echoes. Works with native tools and with the text tool protocol.
 */
import type { RecordedRequest } from "./emulator.ts";
import type { Step } from "./steps.ts";

interface LooseMessage {
  role?: string;
  content?: unknown;
}

/** Decides the demo model's answer to one request. */
export function demoModel(request: RecordedRequest): Step {
  const messages = (Array.isArray(request.body.messages) ? request.body.messages : []) as LooseMessage[];
  const last = messages[messages.length - 1];
  const lastText = textOf(last);
  if (last?.role === "tool") return { text: `Done. The tool said: "${clip(lastText)}"` };
  const textResult = /^<tool_result[^>]*>([\s\S]*)<\/tool_result>$/.exec(lastText.trim());
  if (last?.role === "user" && textResult) return { text: `Done. The tool said: "${clip(textResult[1])}"` };

  const offered = offeredTools(request, messages);
  const call = (name: string, args: Record<string, unknown>): Step =>
    offered.native ? { toolCalls: [{ name, arguments: JSON.stringify(args) }] } : { textToolCalls: [{ name, arguments: args }] };
  const run = /\brun (.+)/is.exec(lastText);
  if (run && offered.names.has("shell")) return call("shell", { command: run[1].trim() });
  if (/time/i.test(lastText) && offered.names.has("current_time")) return call("current_time", {});
  return { text: `echo: ${lastText}` };
}

function offeredTools(request: RecordedRequest, messages: LooseMessage[]): { native: boolean; names: Set<string> } {
  if (Array.isArray(request.body.tools)) {
    const names = (request.body.tools as Array<{ function?: { name?: string } }>).map((t) => t.function?.name ?? "");
    return { native: true, names: new Set(names) };
  }
  // The text protocol lists each tool under a "### <name>" heading in a system message.
  const names = new Set<string>();
  for (const m of messages) {
    if (m.role !== "system" || !textOf(m).includes("<tool_call>")) continue;
    for (const match of textOf(m).matchAll(/^### (\S+)$/gm)) names.add(match[1]);
  }
  return { native: false, names };
}

function textOf(message: LooseMessage | undefined): string {
  return typeof message?.content === "string" ? message.content : "";
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
