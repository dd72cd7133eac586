/**
 * The shapes Discord accepts for what the bot sends, and Discord's "Invalid Form Body"
 * (code 50035) error tree for what it refuses, so the bot meets the real limits here first.
 */
import { z } from "zod";

/** Discord's message text limit. */
export const MAX_CONTENT = 2000;
/** Discord's custom_id limit on a component. */
export const MAX_CUSTOM_ID = 100;

const ButtonSchema = z
  .object({
    type: z.literal(2),
    style: z.number().int().min(1).max(6),
    label: z.string().max(80).optional(),
    custom_id: z.string().min(1).max(MAX_CUSTOM_ID).optional(),
    url: z.string().optional(),
    disabled: z.boolean().optional(),
    emoji: z.unknown().optional(),
  })
  .refine((b) => (b.style === 5 ? Boolean(b.url) : Boolean(b.custom_id)), { message: "A button needs a custom_id (or a url for link buttons)" });

const ActionRowSchema = z.object({ type: z.literal(1), components: z.array(ButtonSchema).min(1).max(5) });

/** Body of POST /channels/{id}/messages and of webhook executes. */
export const MessageBodySchema = z.looseObject({
  content: z.string().max(MAX_CONTENT).optional(),
  components: z.array(ActionRowSchema).max(5).optional(),
  embeds: z.array(z.unknown()).max(10).optional(),
  flags: z.number().int().optional(),
  message_reference: z
    .looseObject({ message_id: z.string(), channel_id: z.string().optional(), fail_if_not_exists: z.boolean().optional() })
    .optional(),
  allowed_mentions: z.unknown().optional(),
});
export type MessageBody = z.infer<typeof MessageBodySchema>;

/** Body of PATCH /channels/{id}/messages/{id}: every field optional, null clears. */
export const MessageEditSchema = z.looseObject({
  content: z.string().max(MAX_CONTENT).nullable().optional(),
  components: z.array(ActionRowSchema).max(5).nullable().optional(),
  embeds: z.array(z.unknown()).max(10).nullable().optional(),
  allowed_mentions: z.unknown().optional(),
});

/** Body of POST /channels/{id}/messages/{id}/threads. */
export const StartThreadSchema = z.looseObject({
  name: z.string().min(1).max(100),
  auto_archive_duration: z.union([z.literal(60), z.literal(1440), z.literal(4320), z.literal(10080)]).optional(),
  rate_limit_per_user: z.number().int().optional(),
});

/** Body of POST /interactions/{id}/{token}/callback; `data` is read by type (a message body, or a modal for 9). */
export const InteractionCallbackSchema = z.object({
  type: z.union([z.literal(1), z.literal(4), z.literal(5), z.literal(6), z.literal(7), z.literal(8), z.literal(9)]),
  data: z.unknown().optional(),
});

/** Body of PUT /applications/{id}/commands. */
export const CommandsSchema = z
  .array(
    z.looseObject({
      name: z.string().regex(/^[-_\p{L}\p{N}]{1,32}$/u),
      description: z.string().min(1).max(100),
      type: z.number().int().optional(),
    }),
  )
  .max(100);

/** Discord's 50035 error body for zod issues: `{ errors: { content: { _errors: [...] } } }`. */
export function invalidFormBody(error: z.ZodError): Record<string, unknown> {
  const errors: Record<string, unknown> = {};
  for (const issue of error.issues) {
    let node = errors;
    for (const key of issue.path) {
      const k = String(key);
      node[k] ??= {};
      node = node[k] as Record<string, unknown>;
    }
    const list = ((node._errors as unknown[]) ??= []);
    list.push(describeIssue(issue));
  }
  return { message: "Invalid Form Body", code: 50035, errors };
}

function describeIssue(issue: z.core.$ZodIssue): { code: string; message: string } {
  if (issue.code === "too_big") {
    return issue.origin === "string"
      ? { code: "BASE_TYPE_MAX_LENGTH", message: `Must be ${String(issue.maximum)} or fewer in length.` }
      : { code: "BASE_TYPE_BAD_LENGTH", message: `Must be between 1 and ${String(issue.maximum)} in length.` };
  }
  if (issue.code === "too_small") return { code: "BASE_TYPE_BAD_LENGTH", message: "Must be at least 1 in length." };
  if (issue.code === "invalid_type" && issue.input === undefined) return { code: "BASE_TYPE_REQUIRED", message: "This field is required" };
  return { code: "BASE_TYPE_INVALID", message: issue.message };
}
