/**
 * The approval card as Block Kit: tool, redacted argument summary, requester, who may
 * approve, expiry, and the Approve · Always · Deny · Deny with reason… buttons whose values are the
 * card's payloads. The resolved card keeps the facts, shows the decision and has no buttons; the
 * decision line is plain_text, so nothing in it (a name, a denial's reason) renders as mrkdwn.
 *
 * The arguments are a code block in their own section, `&`, `<` and `>` escaped, so no mrkdwn in
 * them renders (no mention, link or formatting); backticks that could close the block early are
 * kept apart by zero-width spaces, which the card says. They are cut to the section's 3,000
 * characters; the "deny if unsure" warning and the requester and approver line are blocks of
 * their own, so no cut can remove them.
 */
import {
  approverList, cardLabel, formatDuration, MAX_RESOLUTION_CHARS, type ApprovalCard, type ApprovalResolution, type CardButton,
} from "../../src/approval/card.ts";
import { BACKTICK_NOTE, fitCardArguments, separateBacktickRuns, type CardArguments } from "../../src/approval/summary.ts";
import { escapeSlackText } from "./mrkdwn.ts";

/** Prefix of every approval button's action_id; the adapter listens for it. */
export const APPROVAL_ACTION_PREFIX = "gatehouse_approval";

/** Slack's limit for a section's text. */
const MAX_SECTION_TEXT = 3000;

/** A Block Kit block (the SDK accepts any object with a `type`). */
type Block = { type: string; block_id?: string; [field: string]: unknown };

const LABELS: Record<CardButton, { text: string; style?: "primary" | "danger" }> = {
  approve: { text: "Approve", style: "primary" },
  always: { text: "Always" },
  deny: { text: "Deny", style: "danger" },
  denyWithReason: { text: "Deny with reason…" },
};

/** `<@U…>` for Slack user ids, escaped text for anything else ("the requester", group names). */
function who(idOrName: string): string {
  return /^[UW][A-Z0-9]{2,}$/.test(idOrName) ? `<@${idOrName}>` : escapeSlackText(cardLabel(idOrName));
}

function argumentsText(shown: CardArguments): { text: string; separated: boolean } {
  const code = separateBacktickRuns(escapeSlackText(shown.args));
  return { text: `*Arguments:*\n\`\`\`${code.text}\`\`\``, separated: code.separated };
}

function factBlocks(card: ApprovalCard): Block[] {
  const blocks: Block[] = [
    { type: "section", text: { type: "mrkdwn", text: `:lock: *Approval needed:* \`${escapeSlackText(cardLabel(card.tool))}\`` } },
  ];
  if (!card.argsSummary) return blocks;
  const shown = fitCardArguments(card.argsSummary, (candidate) => argumentsText(candidate).text.length <= MAX_SECTION_TEXT);
  const args = argumentsText(shown);
  blocks.push({ type: "section", text: { type: "mrkdwn", text: args.text } });
  const notes = [...(args.separated ? [BACKTICK_NOTE] : []), ...(shown.warning ? [`*${escapeSlackText(shown.warning)}*`] : [])];
  if (notes.length) blocks.push({ type: "section", text: { type: "mrkdwn", text: notes.join("\n") } });
  return blocks;
}

/** The blocks of an open card, with its four buttons. */
export function approvalCardBlocks(card: ApprovalCard, now = Date.now()): Block[] {
  const left = formatDuration(card.expiresAt - now);
  const requester = card.requester.name ? escapeSlackText(cardLabel(card.requester.name)) : who(card.requester.id);
  const choices: CardButton[] = ["approve", "always", "deny", "denyWithReason"];
  return [
    ...factBlocks(card),
    {
      type: "context",
      elements: [{ type: "mrkdwn", text: `Requested by ${requester} · May approve: ${approvers(card.approvers)} · Expires in ${left}` }],
    },
    ...(card.note ? [{ type: "context", elements: [{ type: "mrkdwn", text: escapeSlackText(card.note.slice(0, 500)) }] }] : []),
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
  return [
    ...factBlocks(card),
    { type: "context", elements: [{ type: "plain_text", text: `${mark} ${cardLabel(resolution.text, MAX_RESOLUTION_CHARS)}`, emoji: true }] },
  ];
}

/** Who may approve: user ids as mentions, the rest as escaped text, the list bounded like on every card. */
function approvers(list: readonly string[]): string {
  const ids = list.filter((a) => /^[UW][A-Z0-9]{2,}$/.test(a));
  const others = approverList(list.filter((a) => !ids.includes(a)));
  const mentions = ids.slice(0, 20).map(who);
  const more = ids.length - mentions.length;
  return [...mentions, ...(others ? [escapeSlackText(others)] : []), ...(more > 0 ? [`${more} more`] : [])].join(", ");
}

/**
 * The notification text of a card (shown where blocks are not: notifications, screen readers). It
 * names the tool and the requester only; the arguments are on the card, where they are shown inert.
 */
export function approvalFallbackText(card: ApprovalCard): string {
  return escapeSlackText(`🔐 Approval needed: ${cardLabel(card.tool)} (requested by ${cardLabel(card.requester.name ?? card.requester.id)})`);
}
