/**
 * The approval card: what a channel shows when a tool call waits for a person, and the
 * compact button payload that comes back when someone clicks. The payload fits the
 * smallest platform limit (Telegram callback_data, 64 bytes): `gh1:<id>:<a|w|d|r>`. The fourth
 * button, "Deny with reason…" (`r`), decides nothing itself: the adapter asks the clicker for a
 * reason (a modal, a forced reply), and the answer comes back as a `deny` with that reason.
 */
import type { ApprovalChoice } from "../envelope.ts";
import { parseArgsSummary, revealInvisible } from "./summary.ts";

export interface ApprovalCard {
  approvalId: string;
  tool: string;
  /** A short, secret-free summary of the arguments. */
  argsSummary: string;
  requester: { id: string; name?: string };
  /** Human-readable list of who may approve ("the requester", ids of admins). */
  approvers: string[];
  expiresAt: number;
  /**
   * Plain text under the approvers line, from the approver rule: how many must approve, that the
   * requester may not, a link to the thread that asked (for a card posted in an approvers' channel).
   * Renderers show it as inert text.
   */
  note?: string;
  /** Button payloads, one per button. */
  buttons: Record<CardButton, string>;
}

/** The buttons of an open card: the three choices, and "Deny with reason…", which asks for the reason first. */
export type CardButton = ApprovalChoice | "denyWithReason";

/** What a button payload stands for: a choice, or (`askReason`) a Deny that waits for the clicker's reason. */
export interface DecodedApprovalPayload {
  approvalId: string;
  choice: ApprovalChoice;
  /** The "Deny with reason…" button: ask the clicker why before sending the `deny`. */
  askReason?: true;
}

/** How many characters of a resolution line a card shows (room for a denial reason). */
export const MAX_RESOLUTION_CHARS = 800;

export interface ApprovalResolution {
  outcome: "approved" | "always" | "denied" | "expired" | "cancelled";
  by?: { id: string; name?: string };
  /** One line saying what was decided and by whom, ready to show on the card. */
  text: string;
}

const CODES: Record<CardButton, string> = { approve: "a", always: "w", deny: "d", denyWithReason: "r" };
const PAYLOAD = /^gh1:([A-Za-z0-9_-]{6,32}):([awdr])$/;

/** Encodes a button payload for a card's button. */
export function encodeApprovalPayload(approvalId: string, button: CardButton): string {
  return `gh1:${approvalId}:${CODES[button]}`;
}

/** Decodes a button payload; undefined for anything that is not one of ours (forged or foreign). */
export function decodeApprovalPayload(payload: string): DecodedApprovalPayload | undefined {
  const m = PAYLOAD.exec(payload);
  if (!m) return undefined;
  const button = (Object.keys(CODES) as CardButton[]).find((c) => CODES[c] === m[2])!;
  return button === "denyWithReason" ? { approvalId: m[1]!, choice: "deny", askReason: true } : { approvalId: m[1]!, choice: button };
}

/** The buttons of a card for `approvalId`. */
export function approvalButtons(approvalId: string): Record<CardButton, string> {
  return {
    approve: encodeApprovalPayload(approvalId, "approve"),
    always: encodeApprovalPayload(approvalId, "always"),
    deny: encodeApprovalPayload(approvalId, "deny"),
    denyWithReason: encodeApprovalPayload(approvalId, "denyWithReason"),
  };
}

/** A wait as a person reads it: "45 s", "5 min", "2 h". */
export function formatDuration(ms: number): string {
  const s = Math.max(1, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 120 ? `${m} min` : `${Math.round(m / 60)} h`;
}

/**
 * A name or label from outside (a display name, a tool or group name) as a card shows it: invisible
 * and reordering characters revealed, cut to `max` characters so no name can push a card's other
 * lines out of its platform's limit.
 */
export function cardLabel(text: string, max = 80): string {
  const shown = Array.from(revealInvisible(text));
  return shown.length > max ? `${shown.slice(0, max - 1).join("")}…` : shown.join("");
}

/** Who may approve, as one bounded line: "Ann, Bob and 12 more". */
export function approverList(approvers: readonly string[], maxChars = 300): string {
  const names = approvers.map((a) => cardLabel(a));
  const shown: string[] = [];
  let used = 0;
  for (const name of names) {
    if (shown.length && used + name.length + 2 > maxChars) break;
    shown.push(name);
    used += name.length + 2;
  }
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(", ")} and ${more} more` : shown.join(", ");
}

/** Plain-text rendering of a card, for channels without rich layouts and for logs. */
export function approvalCardText(card: ApprovalCard): string {
  const who = cardLabel(card.requester.name ?? card.requester.id);
  const left = formatDuration(card.expiresAt - Date.now());
  const summary = card.argsSummary ? parseArgsSummary(card.argsSummary) : undefined;
  const cut = summary && summary.hiddenChars > 0 ? `${summary.hiddenChars} more characters are not shown` : "";
  const hidden = summary?.redacted ? "some values are hidden as [redacted]" : "";
  const warning = [cut, hidden].filter(Boolean).join("; ");
  return [
    `🔐 Approval needed: ${cardLabel(card.tool)}`,
    summary ? `Arguments: ${summary.args}${cut ? "…" : ""}` : "",
    warning ? `⚠️ ${warning} — deny if you are unsure what runs.` : "",
    `Requested by ${who}. May approve: ${approverList(card.approvers)}. Expires in ${left}.`,
  ]
    .filter(Boolean)
    .join("\n");
}
