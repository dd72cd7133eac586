/**
 * What a pending approval's record shows people: its card (who asked, who may decide, the approver
 * rule's note), who may decide it as a refusal lists them, and the line a decided card says.
 */
import type { PendingApprovalRecord } from "../store/store.ts";
import { approvalButtons, formatDuration, type ApprovalCard, type ApprovalResolution } from "./card.ts";
import { formatSpan, parseSpan } from "../policy/duration.ts";

const who = (p: { id?: string; name?: string }) => p.name ?? p.id ?? "someone";

/** Who may decide a record, as the refusal and the card list them. */
export function approverNames(record: PendingApprovalRecord): string[] {
  const asked = record.approvers.includes(record.requesterId) ? [record.requesterName ?? record.requesterId] : [];
  const rule = record.approverRule;
  return [
    ...asked,
    ...record.approvers.filter((a) => a !== record.requesterId),
    ...(rule?.groups ?? []).map((g) => `group ${g}`),
    ...(rule?.roles ?? []).map((r) => `role ${r}`),
    ...(rule?.chatAdmins ? ["the chat's admins"] : []),
  ];
}

/** The card's note from its approver rule: quorum, no self-approval, the thread that asked. */
function noteOf(record: PendingApprovalRecord): string | undefined {
  const rule = record.approverRule;
  if (!rule) return undefined;
  const lines: string[] = [];
  if (rule.quorum > 1) lines.push(`Needs ${rule.quorum} different people to approve.`);
  if (!record.approvers.includes(record.requesterId)) lines.push(`${who(requester(record))} asked and may not approve it.`);
  if (rule.askedIn) lines.push(`Asked in: ${rule.askedInLink ?? `the thread of ${requester(record).name ?? record.requesterId}`}`);
  return lines.length ? lines.join("\n") : undefined;
}

/** The card of a record, as it was posted. */
export function cardOf(record: PendingApprovalRecord): ApprovalCard {
  const requester = { id: record.requesterId, name: record.requesterName };
  const names = approverNames(record);
  // approverNames lists the requester first when they may decide.
  const approvers = record.approvers.includes(record.requesterId) ? [`${who(requester)} (who asked)`, ...names.slice(1)] : names;
  const note = noteOf(record);
  return {
    approvalId: record.id, tool: record.tool, argsSummary: record.argsSummary, requester,
    approvers, expiresAt: record.expiresAt, buttons: approvalButtons(record.id),
    ...(note ? { note } : {}),
  };
}

const requester = (record: PendingApprovalRecord) => ({ id: record.requesterId, name: record.requesterName });
/** " for 7 d" when remembered decisions expire, else nothing. */
const alwaysFor = (ttl?: string) => {
  const ms = ttl ? parseSpan(ttl) : undefined;
  return ms === undefined ? "" : ` for ${formatSpan(ms)}`;
};

/** What a decided card says. */
export function resolutionOf(record: PendingApprovalRecord, alwaysTtl?: string): ApprovalResolution {
  const by = record.decidedById ? { id: record.decidedById, name: record.decidedByName } : undefined;
  const tool = record.tool;
  switch (record.state) {
    case "approved":
      return { outcome: "approved", by, text: `✅ Approved by ${who(by ?? {})}: ${tool} runs.` };
    case "always":
      return record.allowAlways === false
        ? { outcome: "always", by, text: `✅ Approved by ${who(by ?? {})}: ${tool} runs (it always asks, so "Always" counts once).` }
        : { outcome: "always", by, text: `✅ Always allowed by ${who(by ?? {})}: ${tool} runs, and will not ask ${who(requester(record))} again here${alwaysFor(alwaysTtl)}.` };
    case "denied":
      return {
        outcome: "denied", by,
        text: `🚫 Denied by ${who(by ?? {})}: ${tool} was not run.${record.decisionReason ? ` Reason: ${record.decisionReason}` : ""}`,
      };
    case "cancelled":
      return { outcome: "cancelled", text: `Cancelled: the request was stopped; ${tool} was not run.` };
    default:
      return { outcome: "expired", text: `⌛ Expired: no decision within ${formatDuration(record.expiresAt - record.createdAt)}; ${tool} was not run.` };
  }
}
