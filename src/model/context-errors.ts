/**
 * Recognizes a provider's "the prompt is too long for this model" refusal among the 4xx answers of
 * the servers people run: OpenAI (and Azure, Groq, DeepSeek, OpenRouter) with the code
 * `context_length_exceeded`, vLLM, llama.cpp, Ollama, LM Studio, TGI, Mistral, Gemini's
 * OpenAI-compatible API and Anthropic-compatible gateways. Such a refusal is not a failure of the
 * endpoint: the engine compacts the conversation and asks once more (engine/fit-prompt.ts).
 */
import { APIError } from "openai";

/** Error codes and types that say exactly this. */
const REFUSAL_CODES = new Set(["context_length_exceeded", "exceed_context_size_error", "string_above_max_length"]);

/**
 * The texts of the common servers, e.g.
 * - OpenAI, vLLM, DeepSeek: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens…"
 * - vLLM (newer): "The decoder prompt (length 5000) is longer than the maximum model length of 4096."
 * - llama.cpp: "request (4476 tokens) exceeds the available context size (4096 tokens)", "Context size has been exceeded."
 * - Ollama: "the input length exceeds the context length", "prompt too long; exceeded max context length by 12 tokens"
 * - Anthropic-compatible: "prompt is too long: 210000 tokens > 200000 maximum"
 * - LM Studio: "…the model is loaded with context length of only 4096 tokens, which is not enough."
 * - TGI: "`inputs` tokens + `max_new_tokens` must be <= 4096"; Mistral: "too large for model with 32768 maximum context length"
 * - Gemini: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
 */
const REFUSAL_TEXTS = [
  /maximum context length/i,
  /context length exceeded|exceeds? (the )?(maximum |max |model'?s? )?context (length|size|window)/i,
  /exceeds the available context size/i,
  /context size has been exceeded/i,
  /context window (is )?(full|exceeded)|exceeds the context window/i,
  /longer than the maximum model length/i,
  /input (length )?exceeds (the )?(maximum )?context length/i,
  /prompt (is )?too long/i,
  /context length of only \d+/i,
  /inputs`? tokens \+ `?max_new_tokens`? must be <=/i,
  /too large for model with \d+ maximum context length/i,
  /input token count.*exceeds the maximum number of tokens/i,
  /reduce the length of the (messages|prompt|input)/i,
];

/** Texts that mention tokens but are about rate limits or quotas, never the window. */
const NOT_A_WINDOW = /per minute|per day|rate limit|TPM|RPM|quota/i;

/** Statuses a refusal of the prompt's length comes with (422: TGI; 413: some gateways). */
const REFUSAL_STATUSES = new Set([400, 413, 422]);

/** True when `error` is the endpoint saying the prompt does not fit the model's context window. */
export function isContextLengthRefusal(error: unknown): boolean {
  if (!(error instanceof APIError)) return false;
  if (error.status !== undefined && !REFUSAL_STATUSES.has(error.status)) return false;
  if (REFUSAL_CODES.has(String(error.code ?? "")) || REFUSAL_CODES.has(String(error.type ?? ""))) return true;
  const text = error.message;
  if (NOT_A_WINDOW.test(text)) return false;
  return REFUSAL_TEXTS.some((pattern) => pattern.test(text));
}

/**
 * The window the refusal names, when it names one ("maximum context length is 4096 tokens",
 * "available context size (4096 tokens)", "> 200000 maximum"); llama.cpp also sends `n_ctx`.
 */
export function refusedWindowTokens(error: unknown): number | undefined {
  if (!(error instanceof APIError)) return undefined;
  const body = error.error as { n_ctx?: unknown } | undefined;
  if (typeof body?.n_ctx === "number" && body.n_ctx > 0) return body.n_ctx;
  const text = error.message;
  const patterns = [
    /maximum context length is (\d+)/i,
    /available context size \((\d+) tokens?\)/i,
    /maximum model length of (\d+)/i,
    /context length of only (\d+)/i,
    /> ?(\d+) maximum/i,
    /must be <= ?(\d+)/i,
    /model with (\d+) maximum context length/i,
    /maximum number of tokens allowed \((\d+)\)/i,
  ];
  for (const pattern of patterns) {
    const m = pattern.exec(text);
    const n = m ? Number(m[1]) : NaN;
    if (Number.isInteger(n) && n > 0) return n;
  }
  return undefined;
}
