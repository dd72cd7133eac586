/**
 * The built-in demo model (src/model/demo-model.ts) served by the OpenAI-compatible emulator, for
 * trying a real HTTP model endpoint without one: the same script, read from the wire request and
 * answered as native tool calls or text-protocol `<tool_call>` blocks, whichever the request uses.
 */
import { demoAnswer, type DemoMessage } from "../../../src/model/demo-model.ts";
import type { RecordedRequest } from "./emulator.ts";
import type { Step } from "./steps.ts";

/** Decides the demo model's answer to one request. */
export function demoModel(request: RecordedRequest): Step {
  const messages = (Array.isArray(request.body.messages) ? request.body.messages : []) as DemoMessage[];
  const offered = offeredTools(request, messages);
  const answer = demoAnswer(messages, offered.names);
  if ("text" in answer) return { text: answer.text };
  const { name, args } = answer.call;
  return offered.native ? { toolCalls: [{ name, arguments: JSON.stringify(args) }] } : { textToolCalls: [{ name, arguments: args }] };
}

function offeredTools(request: RecordedRequest, messages: DemoMessage[]): { native: boolean; names: Set<string> } {
  if (Array.isArray(request.body.tools)) {
    const names = (request.body.tools as Array<{ function?: { name?: string } }>).map((t) => t.function?.name ?? "");
    return { native: true, names: new Set(names) };
  }
  // The text protocol lists each tool under a "### <name>" heading in a system message.
  const names = new Set<string>();
  for (const m of messages) {
    const text = typeof m.content === "string" ? m.content : "";
    if (m.role !== "system" || !text.includes("<tool_call>")) continue;
    for (const match of text.matchAll(/^### (\S+)$/gm)) names.add(match[1]!);
  }
  return { native: false, names };
}
