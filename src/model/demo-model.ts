/**
 * The built-in demo model: a small scripted stand-in for an LLM, so that `npm start` with no model
 * endpoint configured (on the console) and `npm run demo` show the bot at work in the first minute:
 * an answer, a tool call with its progress lines, and an approval prompt. It greets, asks for the
 * time with `current_time`, runs `run <command>` with `shell` (which asks first), quotes the tool's
 * result once it comes back, and otherwise echoes.
 *
 * `demoAnswer` is the script; `createDemoModelClient` runs it inside the process as a ModelClient.
 * The test emulator's demo (test/emulators/openai/demo-model.ts) serves the same script over HTTP.
 */
import type { ModelClient, ModelReply, ModelRequest } from "./types.ts";

/** Said on the terminal when the bot runs on the demo model. */
export const DEMO_MODEL_NOTICE = "demo model — set OPENAI_API_KEY or OPENAI_BASE_URL for a real one";

/** What to type to see the demo do something. */
export const DEMO_MODEL_HINT = 'try "hello", "what time is it" (a tool call with progress lines) or "run ls" (a shell command, once you approve it)';

/** A message as the script reads it: a role and, when it is text, its content. */
export interface DemoMessage {
  role?: string;
  content?: unknown;
}

/** What the demo model does next: answer with text, or call one tool. */
export type DemoAnswer = { text: string } | { call: { name: string; args: Record<string, unknown> } };

/** Decides the demo model's next step from the conversation so far and the names of the tools offered. */
export function demoAnswer(messages: readonly DemoMessage[], offered: ReadonlySet<string>): DemoAnswer {
  const last = messages[messages.length - 1];
  const lastText = textOf(last);
  if (last?.role === "tool") return { text: `Done. The tool said: "${clip(lastText)}"` };
  // The text tool protocol returns results as a user message holding <tool_result> blocks.
  const textResult = /^<tool_result[^>]*>([\s\S]*)<\/tool_result>$/.exec(lastText.trim());
  if (last?.role === "user" && textResult) return { text: `Done. The tool said: "${clip(textResult[1] ?? "")}"` };

  const run = /\brun (.+)/is.exec(lastText);
  if (run && offered.has("shell")) return { call: { name: "shell", args: { command: run[1]!.trim() } } };
  if (/time/i.test(lastText) && offered.has("current_time")) return { call: { name: "current_time", args: {} } };
  if (/^\s*(hello|hi|hey)\b/i.test(lastText)) {
    return {
      text:
        "Hello! I am Gatehouse's built-in demo model: a short script, not an LLM. Ask \"what time is it\" to see a tool call " +
        'with its progress lines, or "run ls" to see a shell command wait for your approval.',
    };
  }
  return { text: `echo: ${lastText}` };
}

/** The demo model as a client the engine calls, inside this process (no server, no key). */
export function createDemoModelClient(): ModelClient {
  let calls = 0;
  return {
    async complete(request: ModelRequest): Promise<ModelReply> {
      request.signal?.throwIfAborted();
      const answer = demoAnswer(request.messages, new Set((request.tools ?? []).map((t) => t.name)));
      if ("text" in answer) {
        request.onTextDelta?.(answer.text);
        return { text: answer.text, toolCalls: [], finishReason: "stop" };
      }
      const id = `demo_call_${++calls}`;
      return { text: "", toolCalls: [{ id, name: answer.call.name, arguments: JSON.stringify(answer.call.args) }], finishReason: "tool_calls" };
    },
    async describe() {
      return { name: "gatehouse-demo" };
    },
  };
}

function textOf(message: DemoMessage | undefined): string {
  return typeof message?.content === "string" ? message.content : "";
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
