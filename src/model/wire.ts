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
