/**
 * The non-interactive approval manager: for channels that cannot ask anyone. It denies every
 * prompt-required call by itself, and the result says so.
 */
import type { ApprovalDecision, ApprovalManager } from "./types.ts";

export function createNonInteractiveApprovals(reason = "this channel cannot show approval buttons"): ApprovalManager {
  return {
    kind: "non-interactive",
    async request(): Promise<ApprovalDecision> {
      return { outcome: "unavailable", source: "non-interactive", reason };
    },
  };
}
