/**
 * The approval card as Block Kit: tool, redacted argument summary, requester, who may
 * approve, expiry, and the Approve · Always · Deny buttons whose values are the card's
 * payloads. The resolved card keeps the facts, shows the decision and has no buttons.
 */
import type { ApprovalChoice } from "../../src/envelope.ts";
import { approvalCardText, formatDuration, type ApprovalCard, type ApprovalResolution } from "../../src/approval/card.ts";
import { escapeSlackText } from "./mrkdwn.ts";

/** Prefix of every approval button's action_id; the adapter listens for it. */
export const APPROVAL_ACTION_PREFIX = "gatehouse_approval";

/** Room left for the argument summary inside one section (Slack allows 3,000 characters). */
const MAX_ARGS_CHARS = 2500;

/** A Block Kit block (the SDK accepts any object with a `type`). */
type Block = { type: string; block_id?: string; [field: string]: unknown };

const LABELS: Record<ApprovalChoice, { text: string; style?: "primary" | "danger" }> = {
  approve: { text: "Approve", style: "primary" },
  always: { text: "Always" },
  deny: { text: "Deny", style: "danger" },
};

/** `<@U…>` for Slack user ids, escaped text for anything else ("the requester", group names). */
function who(idOrName: string): string {
  return /^[UW][A-Z0-9]{2,}$/.test(idOrName) ? `<@${idOrName}>` : escapeSlackText(idOrName);
}

function factBlocks(card: ApprovalCard): Block[] {
  const args = card.argsSummary.length > MAX_ARGS_CHARS ? `${card.argsSummary.slice(0, MAX_ARGS_CHARS)}…` : card.argsSummary;
  const blocks: Block[] = [
    { type: "section", text: { type: "mrkdwn", text: `:lock: *Approval needed:* \`${escapeSlackText(card.tool)}\`` } },
  ];
  if (args) blocks.push({ type: "section", text: { type: "mrkdwn", text: `*Arguments:*\n\`\`\`${escapeSlackText(args)}\`\`\`` } });
  return blocks;
}

/** The blocks of an open card, with its three buttons. */
export function approvalCardBlocks(card: ApprovalCard, now = Date.now()): Block[] {
  const left = formatDuration(card.expiresAt - now);
  const requester = card.requester.name ? escapeSlackText(card.requester.name) : who(card.requester.id);
  const choices: ApprovalChoice[] = ["approve", "always", "deny"];
  return [
    ...factBlocks(card),
    {
      type: "context",
      elements: [{ type: "mrkdwn", text: `Requested by ${requester} · May approve: ${card.approvers.map(who).join(", ")} · Expires in ${left}` }],
    },
    {
      type: "actions",
      block_id: `approval_${card.approvalId}`,
      elements: choices.map((choice) => ({
        type: "button",
        action_id: `${APPROVAL_ACTION_PREFIX}:${choice}:${card.approvalId}`,
        text: { type: "plain_text", text: LABELS[choice].text },
        value: card.buttons[choice],
        ...(LABELS[choice].style ? { style: LABELS[choice].style } : {}),
      })),
    },
  ];
}

/** The blocks of a decided card: the same facts, the decision, no buttons. */
export function resolvedCardBlocks(card: ApprovalCard, resolution: ApprovalResolution): Block[] {
  const mark = resolution.outcome === "approved" || resolution.outcome === "always" ? ":white_check_mark:" : ":no_entry_sign:";
  return [...factBlocks(card), { type: "context", elements: [{ type: "mrkdwn", text: `${mark} ${escapeSlackText(resolution.text)}` }] }];
}

/** The notification / fallback text of a card. */
export function approvalFallbackText(card: ApprovalCard): string {
  return escapeSlackText(approvalCardText(card));
}
