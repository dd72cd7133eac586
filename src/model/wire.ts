/**
 * The parts of Chat Completions responses Gatehouse reads, as zod schemas: the boundary where
 * whatever an OpenAI-compatible server sent is checked before the rest of the code trusts it.
 * Lenient where real servers differ (a missing tool-call index, arguments sent as an object), and
 * loose where providers add fields of their own (reasoning, thought signatures): those are kept
 * for provider-fields.ts to pick out, never read here.
 */
import { z } from "zod";

/** Tool-call arguments: a JSON string normally; some servers send the object itself. */
const argumentsField = z
  .union([z.string(), z.record(z.string(), z.unknown())])
  .nullish()
  .transform((v) => (v == null ? undefined : typeof v === "string" ? v : JSON.stringify(v)));

/** One piece of a streamed tool call. */
export const toolCallDeltaSchema = z.looseObject({
  index: z.number().int().nonnegative().nullish(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: argumentsField }).nullish(),
});

/** A `chat.completion.chunk`. Chunks without choices (usage reports) are allowed. */
export const completionChunkSchema = z.object({
  choices: z.array(
    z.object({
      delta: z
        .looseObject({
          content: z.string().nullish(),
          tool_calls: z.array(toolCallDeltaSchema).nullish(),
        })
        .nullish(),
      finish_reason: z.string().nullish(),
    }),
  ),
});

/** A non-streamed `chat.completion`. */
export const completionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.looseObject({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.looseObject({
                id: z.string().nullish(),
                function: z.object({ name: z.string(), arguments: argumentsField }),
              }),
            )
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
});

export type CompletionChunk = z.infer<typeof completionChunkSchema>;
export type ToolCallDelta = z.infer<typeof toolCallDeltaSchema>;
export type Completion = z.infer<typeof completionSchema>;

/**
 * A streamed chunk, checked as completionChunkSchema checks it. Chunks of the usual shape (string
 * text, string arguments) are checked by hand and used as they are, which costs a small part of a
 * zod parse and reads the same; anything else goes through the schema.
 */
export function parseChunk(raw: unknown): CompletionChunk {
  return isUsualChunk(raw) ? raw : completionChunkSchema.parse(raw);
}

function isUsualChunk(raw: unknown): raw is CompletionChunk {
  if (!isRecord(raw) || !Array.isArray(raw.choices)) return false;
  for (const choice of raw.choices as unknown[]) {
    if (!isRecord(choice) || !isNullishString(choice.finish_reason)) return false;
    const delta = choice.delta;
    if (delta == null) continue;
    if (!isRecord(delta) || !isNullishString(delta.content)) return false;
    const calls = delta.tool_calls;
    if (calls == null) continue;
    if (!Array.isArray(calls)) return false;
    for (const call of calls as unknown[]) if (!isUsualCallDelta(call)) return false;
  }
  return true;
}

function isUsualCallDelta(call: unknown): boolean {
  if (!isRecord(call) || !isNullishString(call.id)) return false;
  const index = call.index;
  if (index != null && !(Number.isInteger(index) && (index as number) >= 0)) return false;
  const fn = call.function;
  if (fn == null) return true;
  return isRecord(fn) && isNullishString(fn.name) && (fn.arguments === undefined || typeof fn.arguments === "string");
}

/** A plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNullishString(value: unknown): boolean {
  return value == null || typeof value === "string";
}
