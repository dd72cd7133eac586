/**
 * Scheduled tasks in the config file: `schedules: [{ name, cron, timezone?, prompt, deliverTo,
 * approvalsTo? }]`. A cron expression (seconds allowed) is checked by the same library that runs it,
 * so a bad one stops the start with the key and the reason; conversations are written
 * `<platform>:<conversation id>[:<thread id>]`.
 */
import { Cron } from "croner";
import { z } from "zod";

/** A conversation named in the config, e.g. "slack:C0123", "slack:C0123:1712345678.000100", "telegram:-1001234". */
export const ConversationRefSchema = z
  .string()
  .regex(/^(slack|discord|telegram|console):[^:\s]+(:[^\s]+)?$/, 'a conversation: "<slack|discord|telegram|console>:<conversation id>[:<thread id>]"');

/** The parts of a conversation reference. */
export function parseConversationRef(ref: string): { channel: string; conversationId: string; threadId?: string } {
  const [channel, conversationId, ...thread] = ref.split(":");
  return { channel: channel!, conversationId: conversationId!, ...(thread.length ? { threadId: thread.join(":") } : {}) };
}

export const ScheduleSchema = z
  .strictObject({
    /** Names the schedule in logs, status and its policy subject (`schedule:<name>`). */
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "letters, digits, - and _ (at most 64)"),
    /** Cron expression; 6 fields means seconds first ("*\/30 * * * * *"). */
    cron: z.string().min(1),
    /** IANA time zone the expression is read in (default: the machine's). */
    timezone: z.string().optional(),
    /** What the bot is asked at each tick. */
    prompt: z.string().min(1).max(8000).refine((p) => p.trim() !== "", "must not be blank"),
    /** Where the answer and its progress go. */
    deliverTo: ConversationRefSchema,
    /** Where approval cards go; without it, calls that need a person are denied ("no approval channel here"). */
    approvalsTo: ConversationRefSchema.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.timezone !== undefined && !isTimeZone(s.timezone)) {
      ctx.addIssue({ code: "custom", path: ["timezone"], message: `not an IANA time zone: "${s.timezone}" (e.g. "Europe/Berlin", "America/New_York", "UTC")` });
      return;
    }
    try {
      // A valid expression for a date that does not exist (30 February) would never fire.
      if (!new Cron(s.cron, { paused: true, timezone: s.timezone }).nextRun()) {
        ctx.addIssue({ code: "custom", path: ["cron"], message: `"${s.cron}" never fires (no such date)` });
      }
    } catch (err) {
      ctx.addIssue({ code: "custom", path: ["cron"], message: `not a valid cron expression: ${(err as Error).message}` });
    }
    if (s.approvalsTo && parseConversationRef(s.approvalsTo).channel !== parseConversationRef(s.deliverTo).channel) {
      ctx.addIssue({ code: "custom", path: ["approvalsTo"], message: "must be on the same platform as deliverTo" });
    }
  });
export type ScheduleConfig = z.infer<typeof ScheduleSchema>;

/** Whether the platform knows `name` as a time zone (what croner converts with). */
function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return name.trim() !== "";
  } catch {
    return false;
  }
}

/** Every schedule, names unique. */
export const SchedulesSchema = z.array(ScheduleSchema).default([]).superRefine((list, ctx) => {
  const seen = new Set<string>();
  list.forEach((s, i) => {
    if (seen.has(s.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `"${s.name}" is used by another schedule` });
    seen.add(s.name);
  });
});
