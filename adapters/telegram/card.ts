/**
 * How an approval card looks in Telegram: HTML text (tool, arguments, requester, who may approve,
 * expiry) and an inline keyboard Approve · Always · Deny whose callback_data are the card's
 * payloads, checked against Telegram's 64-byte limit before anything is sent.
 */
import type { InlineKeyboardMarkup } from "grammy/types";
import { formatDuration, type ApprovalCard, type ApprovalResolution } from "../../src/approval/card.ts";
import { MessageRejectedError } from "../../src/ports.ts";
import { escapeHtml } from "./html.ts";

/** Telegram's callback_data limit, in bytes. */
export const MAX_CALLBACK_DATA_BYTES = 64;

/** The card's text in Telegram HTML. */
export function approvalCardHtml(card: ApprovalCard, now = Date.now()): string {
  const who = card.requester.name ?? card.requester.id;
  const left = formatDuration(card.expiresAt - now);
  const expiry = new Date(card.expiresAt).toISOString().slice(11, 16);
  return [
    `🔐 <b>Approval needed:</b> <code>${escapeHtml(card.tool)}</code>`,
    card.argsSummary ? `Arguments: <code>${escapeHtml(card.argsSummary)}</code>` : "",
    `Requested by ${escapeHtml(who)}.`,
    `May approve: ${escapeHtml(card.approvers.join(", "))}.`,
    `Expires in ${left} (${expiry} UTC).`,
  ]
    .filter(Boolean)
    .join("\n");
}

/** The card after a decision: what was asked, then the resolution line; no buttons. */
export function resolvedCardHtml(card: ApprovalCard, resolution: ApprovalResolution): string {
  return [
    `🔐 <b>Approval:</b> <code>${escapeHtml(card.tool)}</code>`,
    card.argsSummary ? `Arguments: <code>${escapeHtml(card.argsSummary)}</code>` : "",
    `<b>${escapeHtml(resolution.text)}</b>`,
  ]
    .filter(Boolean)
    .join("\n");
}

/** The three buttons; throws MessageRejectedError when a payload would not fit callback_data. */
export function approvalKeyboard(card: ApprovalCard): InlineKeyboardMarkup {
  for (const payload of Object.values(card.buttons)) {
    if (Buffer.byteLength(payload, "utf8") > MAX_CALLBACK_DATA_BYTES) {
      throw new MessageRejectedError("other", `approval button payload is longer than ${MAX_CALLBACK_DATA_BYTES} bytes`);
    }
  }
  return {
    inline_keyboard: [
      [
        { text: "✅ Approve", callback_data: card.buttons.approve },
        { text: "♾️ Always", callback_data: card.buttons.always },
        { text: "⛔ Deny", callback_data: card.buttons.deny },
      ],
    ],
  };
}
