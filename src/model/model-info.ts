/**
 * What the endpoint says about the model: its context window, read once from its `/v1/models`
 * entry (vLLM `max_model_len`, OpenRouter and LM Studio `context_length`, Groq `context_window`, …)
 * and corrected when a refusal names the real one. The engine's context budget starts from it.
 */
import { APIError, type OpenAI } from "openai";
import type { Logger } from "pino";
import { z } from "zod";
import type { ModelInfo } from "./types.ts";

/** Fields of a `/v1/models` entry that hold the model's context window, in the order they are trusted. */
const WINDOW_FIELDS = ["max_model_len", "context_length", "context_window", "max_context_length", "max_input_tokens"] as const;

const positive = z.number().int().positive();
const ModelEntry = z.looseObject({
  id: z.string().optional(),
  top_provider: z.looseObject({ context_length: positive.nullish() }).nullish(),
});

/** How long a failed look-up is remembered before the next request tries again. */
const RETRY_AFTER_MS = 60_000;

/** The context window a `/v1/models` entry reports, when it reports one. */
export function contextTokensOf(entry: unknown): number | undefined {
  const parsed = ModelEntry.safeParse(entry);
  if (!parsed.success) return undefined;
  const fields = parsed.data as Record<string, unknown>;
  for (const field of WINDOW_FIELDS) {
    const value = positive.safeParse(fields[field]);
    if (value.success) return value.data;
  }
  return parsed.data.top_provider?.context_length ?? undefined;
}

/** The entry for `model` among a `/v1/models` list, or the only one when a server serves one model under another id. */
export function entryFor(entries: unknown[], model: string): unknown {
  const named = entries.find((e) => ModelEntry.safeParse(e).data?.id === model);
  return named ?? (entries.length === 1 ? entries[0] : undefined);
}

/**
 * Describes a client's model: asks the endpoint once (again a minute after it could not be reached);
 * remembers a window a refusal named, and reports the smaller of the two.
 */
export function modelInfoSource(sdk: OpenAI, model: string, log: Logger): { describe(): Promise<ModelInfo>; learn(contextTokens: number): void } {
  let reported: Promise<number | undefined> | undefined;
  let failedAt = 0;
  let learned: number | undefined;
  const ask = async (): Promise<number | undefined> => {
    try {
      const page = await sdk.models.list({ timeout: 3000, maxRetries: 0 });
      const tokens = contextTokensOf(entryFor(page.data as unknown[], model));
      log.debug({ model, contextTokens: tokens }, "model context window from /models");
      return tokens;
    } catch (err) {
      // A 4xx (no /models route, a key that may not list models) will not change; anything else may.
      const lasting = err instanceof APIError && err.status !== undefined && err.status >= 400 && err.status < 500;
      if (!lasting) failedAt = Date.now();
      log.debug({ err: (err as Error).message }, "the endpoint's /models could not be read; the configured context window applies");
      return undefined;
    }
  };
  return {
    async describe() {
      if (!reported || (failedAt && Date.now() - failedAt > RETRY_AFTER_MS)) {
        failedAt = 0;
        reported = ask();
      }
      const fromList = await reported;
      const known = [fromList, learned].filter((n): n is number => n !== undefined);
      return { name: model, contextTokens: known.length ? Math.min(...known) : undefined };
    },
    learn(contextTokens) {
      learned = learned === undefined ? contextTokens : Math.min(learned, contextTokens);
    },
  };
}
