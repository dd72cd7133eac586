/**
 * How an approval card looks in Telegram: HTML text (tool, arguments, requester, who may approve,
 * expiry) and an inline keyboard Approve · Always · Deny, with Deny with reason… on a row of its
 * own, whose callback_data are the card's payloads, checked against Telegram's 64-byte limit
 * before anything is sent.
 *
 * The arguments are a <pre><code> block with HTML entities escaped, so nothing in them is read as
 * markup. The card is cut to Telegram's limit (4,096 characters of text after entities are parsed,
 * counted here in UTF-16 code units, the stricter measure) by shortening the arguments only: the
 * "deny if unsure" warning and the requester and approver lines always stay.
 */
import type { InlineKeyboardMarkup } from "grammy/types";
import { approverList, cardLabel, formatDuration, MAX_RESOLUTION_CHARS, type ApprovalCard, type ApprovalResolution } from "../../src/approval/card.ts";
import { fitCardArguments, type CardArguments } from "../../src/approval/summary.ts";
import { MessageRejectedError } from "../../src/ports.ts";
import { escapeHtml } from "./html.ts";

/** Telegram's callback_data limit, in bytes. */
export const MAX_CALLBACK_DATA_BYTES = 64;
/** Telegram's message text limit, after entities are parsed. */
export const MAX_TEXT = 4096;

/** The text a person sees of the HTML this file writes (tags dropped, its four entities decoded). */
function visibleLength(html: string): number {
  return html.replace(/<[^>]*>/g, "").replace(/&(lt|gt|amp|quot);/g, "_").length;
}

function argumentLines(shown: CardArguments): string[] {
  return ["Arguments:", `<pre><code>${escapeHtml(shown.args)}</code></pre>`, ...(shown.warning ? [`<b>${escapeHtml(shown.warning)}</b>`] : [])];
}

/** The card's HTML: header, the arguments cut to fit, then `tail` (never cut). */
function fittedHtml(card: ApprovalCard, header: string, tail: string[]): string {
  const render = (shown?: CardArguments) => [header, ...(shown ? argumentLines(shown) : []), ...tail].join("\n");
  if (!card.argsSummary) return render();
  return render(fitCardArguments(card.argsSummary, (candidate) => visibleLength(render(candidate)) <= MAX_TEXT));
}

/** The card's text in Telegram HTML. */
export function approvalCardHtml(card: ApprovalCard, now = Date.now()): string {
  const who = cardLabel(card.requester.name ?? card.requester.id);
  const left = formatDuration(card.expiresAt - now);
  const expiry = new Date(card.expiresAt).toISOString().slice(11, 16);
  return fittedHtml(card, `🔐 <b>Approval needed:</b> <code>${escapeHtml(cardLabel(card.tool))}</code>`, [
    `Requested by ${escapeHtml(who)}.`,
    `May approve: ${escapeHtml(approverList(card.approvers))}.`,
    `Expires in ${left} (${expiry} UTC).`,
    ...(card.note ? [escapeHtml(card.note.slice(0, 500))] : []),
  ]);
}

/** The card after a decision: what was asked, then the resolution line; no buttons. */
export function resolvedCardHtml(card: ApprovalCard, resolution: ApprovalResolution): string {
  return fittedHtml(card, `🔐 <b>Approval:</b> <code>${escapeHtml(cardLabel(card.tool))}</code>`, [
    `<b>${escapeHtml(cardLabel(resolution.text, MAX_RESOLUTION_CHARS))}</b>`,
  ]);
}

/** The four buttons; throws MessageRejectedError when a payload would not fit callback_data. */
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
      [{ text: "📝 Deny with reason…", callback_data: card.buttons.denyWithReason }],
    ],
  };
}
