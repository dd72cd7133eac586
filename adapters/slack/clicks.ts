/**
 * Approval button clicks: acknowledge first (Slack's 3-second deadline), decode the button
 * value, hand the click to the sink, and show a refusal only to the clicker (ephemeral).
 * "Deny with reason…" opens the reason modal instead (reason-modal.ts). Nothing a click carries
 * can crash the adapter.
 */
import { z } from "zod";
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { InboundSink } from "../../src/ports.ts";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import type { LruMap } from "../../src/lru-map.ts";
import { openReasonModal } from "./reason-modal.ts";

/** The fields of a block_actions body the adapter reads. */
const BlockActionsSchema = z.object({
  user: z.object({ id: z.string().min(1), name: z.string().optional(), username: z.string().optional() }),
  channel: z.object({ id: z.string().min(1) }).optional(),
  container: z.object({ message_ts: z.string().optional(), channel_id: z.string().optional(), thread_ts: z.string().optional() }).partial().optional(),
  message: z.object({ ts: z.string().optional(), thread_ts: z.string().optional() }).partial().optional(),
  actions: z.array(z.object({ value: z.string().optional() })).min(1),
  trigger_id: z.string().optional(),
});

/** Shown to someone who clicks a button that is not one of ours (forged or from another app). */
export const NOT_A_VALID_BUTTON = "That is not a valid approval button.";

export interface ClickDeps {
  channel: string;
  client: WebClient;
  log: Logger;
  sink: () => InboundSink | undefined;
  /** The tools of the cards posted (approval id → tool), for the reason modal's wording. */
  cardTools?: LruMap<string, string>;
}

/** Shown when the reason modal could not be opened (Slack refused the click's trigger). */
export const REASON_FORM_FAILED = "The reason form could not be opened; click “Deny with reason…” again, or use Deny.";

/** Handles one block_actions body after it was acknowledged. */
export async function handleApprovalClick(body: unknown, deps: ClickDeps): Promise<void> {
  const parsed = BlockActionsSchema.safeParse(body);
  if (!parsed.success) {
    deps.log.warn({ issues: parsed.error.issues.length }, "malformed block_actions payload dropped");
    return;
  }
  const b = parsed.data;
  const conversationId = b.channel?.id ?? b.container?.channel_id;
  const messageTs = b.container?.message_ts ?? b.message?.ts;
  const threadTs = b.message?.thread_ts ?? b.container?.thread_ts ?? messageTs;
  const tellClicker = async (text: string) => {
    if (!conversationId) return;
    try {
      await deps.client.chat.postEphemeral({ channel: conversationId, user: b.user.id, thread_ts: threadTs, text });
    } catch (err) {
      deps.log.warn({ err: String(err) }, "could not show the clicker an ephemeral reply");
    }
  };

  const decoded = decodeApprovalPayload(b.actions[0]!.value ?? "");
  if (!decoded) {
    deps.log.warn({ user: b.user.id }, "click with a payload that is not an approval button");
    return tellClicker(NOT_A_VALID_BUTTON);
  }
  const sink = deps.sink();
  if (!sink) return tellClicker("The bot is not ready yet; try again in a moment.");
  if (decoded.askReason) {
    const request = { approvalId: decoded.approvalId, tool: deps.cardTools?.get(decoded.approvalId), conversationId, messageTs, threadTs };
    const opened = b.trigger_id ? await openReasonModal(b.trigger_id, request, deps) : false;
    if (!opened) await tellClicker(REASON_FORM_FAILED);
    return;
  }
  try {
    const outcome = await sink.approvalClick({
      channel: deps.channel,
      approvalId: decoded.approvalId,
      choice: decoded.choice,
      actor: { id: b.user.id, name: b.user.name ?? b.user.username, isBot: false },
      messageId: messageTs,
      conversationId,
    });
    if (outcome.status !== "accepted") await tellClicker(outcome.message);
  } catch (err) {
    deps.log.error({ err: String(err), approvalId: decoded.approvalId }, "approval click failed");
    await tellClicker("Something went wrong while recording your decision; please try again.");
  }
}
