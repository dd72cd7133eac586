import { describe, expect, it } from "vitest";
import { APIError } from "openai";
import { startOpenAIEmulator } from "../emulators/openai/index.ts";
import { createModelClient } from "../../src/model/openai-client.ts";
import { ModelError } from "../../src/model/types.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { isContextLengthRefusal, refusedWindowTokens } from "../../src/model/context-errors.ts";
import { contextTokensOf, entryFor } from "../../src/model/model-info.ts";
import { toModelError } from "../../src/model/model-errors.ts";

const refusal = (status: number, message: string, extra: Record<string, unknown> = {}) =>
  APIError.generate(status, { error: { message, type: "invalid_request_error", ...extra } }, undefined, new Headers());

const ctx = { baseURL: "http://127.0.0.1:1/v1", model: "m", timeoutMs: 1000, maxRetries: 0, aborted: false, idleTimedOut: false };

describe("context-length refusals", () => {
  const servers: Array<[string, APIError, number | undefined]> = [
    ["OpenAI (code)", refusal(400, "Your input exceeds the context window of this model.", { code: "context_length_exceeded" }), undefined],
    ["OpenAI, vLLM, DeepSeek", refusal(400, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."), 8192],
    ["vLLM (newer)", refusal(400, "The decoder prompt (length 5000) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens."), 4096],
    ["llama.cpp", refusal(400, "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it", { type: "exceed_context_size_error", n_ctx: 4096 }), 4096],
    ["Ollama", refusal(400, "the input length exceeds the context length"), undefined],
    ["Anthropic-compatible", refusal(400, "prompt is too long: 210000 tokens > 200000 maximum"), 200000],
    ["LM Studio", refusal(400, "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough."), 4096],
    ["TGI", refusal(422, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 5000 `inputs` tokens and 100 `max_new_tokens`"), 4096],
    ["Mistral", refusal(400, "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length"), 32768],
    ["Gemini", refusal(400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."), 1048576],
  ];
  for (const [server, error, window] of servers) {
    it(`recognizes ${server}'s refusal and the window it names`, () => {
      expect(isContextLengthRefusal(error)).toBe(true);
      expect(refusedWindowTokens(error)).toBe(window);
    });
  }

  it("does not take a rate limit, a bad tool message or a server error for one", () => {
    expect(isContextLengthRefusal(refusal(413, "Request too large for model in organization on tokens per min (TPM): Limit 6000, Requested 9000."))).toBe(false);
    expect(isContextLengthRefusal(refusal(400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."))).toBe(false);
    expect(isContextLengthRefusal(refusal(500, "This model's maximum context length is 8192 tokens."))).toBe(false);
    expect(isContextLengthRefusal(new Error("maximum context length"))).toBe(false);
  });

  it("becomes a context_length ModelError carrying the named window", () => {
    const failure = toModelError(servers[1]![1], ctx);
    expect(failure.kind).toBe("context_length");
    expect(failure.windowTokens).toBe(8192);
    expect(failure.message).toMatch(/too long for the model's context window/);
  });
});

describe("the window a /v1/models entry reports", () => {
  it("reads the fields servers use", () => {
    expect(contextTokensOf({ id: "m", max_model_len: 32768 })).toBe(32768); // vLLM
    expect(contextTokensOf({ id: "m", context_length: 131072 })).toBe(131072); // OpenRouter, LM Studio
    expect(contextTokensOf({ id: "m", context_window: 8192 })).toBe(8192); // Groq
    expect(contextTokensOf({ id: "m", top_provider: { context_length: 65536 } })).toBe(65536);
    expect(contextTokensOf({ id: "gpt-4o", object: "model" })).toBeUndefined(); // OpenAI says nothing
    expect(contextTokensOf({ id: "m", context_length: "big" })).toBeUndefined();
  });

  it("picks the configured model's entry, or the only one a single-model server lists", () => {
    expect(entryFor([{ id: "a", context_length: 1 }, { id: "b", context_length: 2 }], "b")).toEqual({ id: "b", context_length: 2 });
    expect(entryFor([{ id: "llama.gguf", context_length: 4096 }], "whatever")).toEqual({ id: "llama.gguf", context_length: 4096 });
    expect(entryFor([{ id: "a" }, { id: "b" }], "c")).toBeUndefined();
  });
});

describe("the client's model info", () => {
  it("reports the window the endpoint's /v1/models lists, then the smaller one a refusal names", async () => {
    const emu = await startOpenAIEmulator({ model: "test-model", contextTokens: 8192 });
    try {
      const client = createModelClient({ baseURL: emu.baseURL, model: "test-model", toolProtocol: "native", timeoutMs: 2000, maxRetries: 0, log: silentLogger() });
      expect(await client.describe!()).toEqual({ name: "test-model", contextTokens: 8192 });
      emu.script({ status: 400, code: "context_length_exceeded", message: "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens." });
      const failure = await client.complete({ messages: [{ role: "user", content: "hi" }] }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(ModelError);
      expect(failure).toMatchObject({ kind: "context_length", windowTokens: 4096 });
      expect(await client.describe!()).toEqual({ name: "test-model", contextTokens: 4096 });
    } finally {
      await emu.close();
    }
  });

  it("knows no window when the endpoint lists none", async () => {
    const emu = await startOpenAIEmulator();
    try {
      const client = createModelClient({ baseURL: emu.baseURL, model: "gpt-4o", toolProtocol: "native", timeoutMs: 2000, maxRetries: 0, log: silentLogger() });
      expect(await client.describe!()).toEqual({ name: "gpt-4o", contextTokens: undefined });
    } finally {
      await emu.close();
    }
  });
});
