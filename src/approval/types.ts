/**
 * The approval manager interface: how a turn asks a person whether a tool call may run.
 * The engine's approval gate calls it only for calls whose requirement is `prompt`.
 */
import type { ReplyTarget, Sender } from "../envelope.ts";
import type { ApproverSet } from "./approver-rules.ts";

export interface ApprovalRequest {
  turnId: string;
  traceId: string;
  sessionKey: string;
  callId: string;
  tool: string;
  /** The exact arguments the tool will run with, frozen. */
  args: Record<string, unknown>;
  argsHash: string;
  /** Secret-free summary shown to the approver. */
  argsSummary: string;
  channel: string;
  conversationId: string;
  requester: Sender;
  target: ReplyTarget;
  signal: AbortSignal;
  /** False when the tool always asks (approval.alwaysAsk): an "Always" answer then counts as one approval. */
  allowAlways?: boolean;
  /** False when the requester is no person (a schedule, an API call): only the configured approvers decide. */
  requesterMayApprove?: boolean;
  /** Who may approve, from the approver rules; unset: the requester and the channel's `approval.approvers`. */
  approvers?: ApproverSet;
}

/** Where a decision came from, as written to the audit log. */
export type ApprovalSource = "console" | "backchannel" | "non-interactive" | "timeout" | "cancelled";

export interface ApprovalDecision {
  outcome: "approved" | "always" | "denied" | "timeout" | "unavailable" | "cancelled";
  by?: { id: string; name?: string };
  source: ApprovalSource;
  /** For `unavailable`: why no one could be asked; for `denied`: the reason the person gave, if any. */
  reason?: string;
}

/**
 * The question was posted (a card in the thread) and a person answers later: the turn parks, and
 * the decision, when it comes, resumes it (see PendingApprovals.onDecision).
 */
export interface ApprovalWaiting {
  outcome: "waiting";
  approvalId: string;
  expiresAt: number;
}

export interface ApprovalManager {
  /** `console`, `backchannel` or `non-interactive`. */
  readonly kind: string;
  /** Asks; resolves with the decision when it is known at once, or with `waiting` when a person answers later. */
  request(request: ApprovalRequest): Promise<ApprovalDecision | ApprovalWaiting>;
}
