/**
 * "Deny with reason…" on Slack: the card's fourth button opens a modal (views.open with the click's
 * trigger_id, valid for 3 s and once) with one multiline input; its submission becomes a `deny`
 * with the typed reason and takes the same path as a click. The submission is acknowledged within
 * Slack's 3 s: the modal closes when the decision is taken, and shows the refusal under the input
 * otherwise (not an approver, already decided, expired). A decision slower than the budget closes
 * the modal and tells the person ephemerally in the thread.
 */
import { z } from "zod";
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { cardLabel } from "../../src/approval/card.ts";
import { denialReason, MAX_DENIAL_REASON_CHARS, type ApprovalClickOutcome } from "../../src/envelope.ts";
import type { InboundSink } from "../../src/ports.ts";

/** The modal's callback_id: the adapter handles view submissions with it, and acks other views as unused. */
export const REASON_MODAL_CALLBACK = "gatehouse_deny_reason";
/** Block and action id of the reason input. */
const REASON_FIELD = "reason";
/** How long a submission waits for the decision before the modal is closed anyway (Slack allows 3 s). */
const DEFAULT_ACK_BUDGET_MS = 2000;

/** Where the modal's answer goes: the approval and the card it came from (kept in private_metadata). */
const MetadataSchema = z.object({
  a: z.string().min(1).max(64),
  c: z.string().max(64).optional(),
  m: z.string().max(64).optional(),
  t: z.string().max(64).optional(),
});
type ReasonMetadata = z.infer<typeof MetadataSchema>;

const SubmissionSchema = z.object({
  user: z.object({ id: z.string().min(1), name: z.string().optional(), username: z.string().optional() }),
  view: z.object({
    private_metadata: z.string(),
    state: z.object({ values: z.record(z.string(), z.record(z.string(), z.looseObject({ value: z.string().nullish() }))) }),
  }),
});


/** The card a "Deny with reason…" click came from. */
export interface ReasonRequest {
  approvalId: string;
  /** The tool the card asks about, when the adapter knows it (it forgets cards posted before a restart). */
  tool?: string;
  conversationId?: string;
  messageTs?: string;
  threadTs?: string;
}

/** The modal asking for the reason. Its text is plain_text, so a tool name shows as typed. */
export function reasonModalView(request: ReasonRequest) {
  const metadata: ReasonMetadata = { a: request.approvalId, c: request.conversationId, m: request.messageTs, t: request.threadTs };
  const what = request.tool ? cardLabel(request.tool) : "this request";
  return {
    type: "modal" as const,
    callback_id: REASON_MODAL_CALLBACK,
    private_metadata: JSON.stringify(metadata),
    title: { type: "plain_text" as const, text: "Deny with reason" },
    submit: { type: "plain_text" as const, text: "Deny" },
    close: { type: "plain_text" as const, text: "Cancel" },
    blocks: [
      {
        type: "input",
        block_id: REASON_FIELD,
        label: { type: "plain_text" as const, text: `Why deny ${what}?` },
        hint: { type: "plain_text" as const, text: "The bot is told this reason, and the card shows it." },
        element: { type: "plain_text_input", action_id: REASON_FIELD, multiline: true, max_length: MAX_DENIAL_REASON_CHARS },
      },
    ],
  };
}

export interface ReasonModalDeps {
  channel: string;
  client: WebClient;
  log: Logger;
  sink: () => InboundSink | undefined;
  ackBudgetMs?: number;
}

/** Opens the reason modal for a click; false when Slack refused (the trigger expired or was used). */
export async function openReasonModal(triggerId: string, request: ReasonRequest, deps: ReasonModalDeps): Promise<boolean> {
  try {
    await deps.client.views.open({ trigger_id: triggerId, view: reasonModalView(request) });
    return true;
  } catch (err) {
    deps.log.warn({ err: String(err), approvalId: request.approvalId }, "the deny-with-reason modal could not be opened");
    return false;
  }
}

type ViewAck = (response?: { response_action: "errors"; errors: Record<string, string> }) => Promise<void>;

/** Handles a submission of the reason modal: decides, then acks within the budget. Never throws. */
export async function handleReasonSubmission(body: unknown, ack: ViewAck, deps: ReasonModalDeps): Promise<void> {
  const parsed = SubmissionSchema.safeParse(body);
  const metadata = parsed.success ? parseMetadata(parsed.data.view.private_metadata) : undefined;
  if (!parsed.success || !metadata) {
    deps.log.warn("malformed deny-with-reason submission refused");
    return refuse(ack, "This form is not valid any more; nothing was decided. Use the card's buttons.", deps.log);
  }
  const b = parsed.data;
  const sink = deps.sink();
  if (!sink) return refuse(ack, "The bot is not ready yet; try again in a moment.", deps.log);
  const reason = denialReason(b.view.state.values[REASON_FIELD]?.[REASON_FIELD]?.value ?? undefined);
  const decided = sink
    .approvalClick({
      channel: deps.channel,
      approvalId: metadata.a,
      choice: "deny",
      actor: { id: b.user.id, name: b.user.name ?? b.user.username, isBot: false },
      ...(metadata.m ? { messageId: metadata.m } : {}),
      ...(metadata.c ? { conversationId: metadata.c } : {}),
      ...(reason ? { reason } : {}),
    })
    .catch((err: unknown): ApprovalClickOutcome => {
      deps.log.error({ err: String(err), approvalId: metadata.a }, "deny-with-reason submission failed");
      return { status: "unknown", message: "Something went wrong while recording your decision; please try again." };
    });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), deps.ackBudgetMs ?? DEFAULT_ACK_BUDGET_MS)));
  const outcome = await Promise.race([decided, late]).finally(() => clearTimeout(timer));
  if (outcome !== "late") {
    if (outcome.status === "accepted") return closeModal(ack, deps.log);
    return refuse(ack, outcome.message, deps.log);
  }
  await closeModal(ack, deps.log);
  const final = await decided;
  if (final.status !== "accepted" && metadata.c) {
    await deps.client.chat
      .postEphemeral({ channel: metadata.c, user: b.user.id, thread_ts: metadata.t, text: final.message })
      .catch((err: unknown) => deps.log.warn({ err: String(err) }, "could not tell the person why their reason was not taken"));
  }
}

function parseMetadata(raw: string): ReasonMetadata | undefined {
  try {
    const parsed = MetadataSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

async function closeModal(ack: ViewAck, log: Logger): Promise<void> {
  await ack().catch((err: unknown) => log.warn({ err: String(err) }, "could not acknowledge a modal submission"));
}

/** Keeps the modal open with `message` under the reason input. */
async function refuse(ack: ViewAck, message: string, log: Logger): Promise<void> {
  await ack({ response_action: "errors", errors: { [REASON_FIELD]: message } }).catch((err: unknown) =>
    log.warn({ err: String(err) }, "could not acknowledge a modal submission"),
  );
}
