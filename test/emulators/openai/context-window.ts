/**
 * The emulator's context window: counts a request's prompt the way a server does (o200k tokens
 * of every message, tool call and tool spec, plus the chat template's framing) and, over the
 * window, answers as OpenAI does: 400 with `context_length_exceeded`.
 */
import type { ChatRequestBody } from "./request-checks.ts";
import { errorBody } from "./steps.ts";

type Count = (text: string) => number;

/** Loads the tokenizer (only for an emulator started with a window). */
export async function promptCounter(): Promise<(body: ChatRequestBody) => number> {
  const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base");
  const options = { disallowedSpecial: new Set<string>() };
  const count: Count = (text) => countTokens(text, options);
  return (body) => promptTokens(body, count);
}

function promptTokens(body: ChatRequestBody, count: Count): number {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Array<{
    content?: unknown;
    tool_calls?: Array<{ function?: { name?: unknown; arguments?: unknown } }>;
  }>;
  let tokens = 3;
  for (const m of messages) {
    tokens += 4 + (typeof m.content === "string" ? count(m.content) : 0);
    for (const call of m.tool_calls ?? []) tokens += 8 + count(String(call.function?.name ?? "")) + count(String(call.function?.arguments ?? ""));
  }
  if (Array.isArray(body.tools) && body.tools.length) tokens += count(JSON.stringify(body.tools)) + 8 * body.tools.length;
  return tokens;
}

/** OpenAI's refusal of a prompt over the window. */
export function contextLengthRefusal(window: number, tokens: number): string {
  return errorBody(
    `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
    "invalid_request_error",
    "context_length_exceeded",
  );
}
