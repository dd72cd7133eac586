/**
 * The console approval manager: asks the person at the terminal — yes / no / always — and
 * times out to deny like any other approval.
 */
import { approvalCardText, approvalButtons } from "./card.ts";
import type { ApprovalDecision, ApprovalManager, ApprovalRequest } from "./types.ts";

export interface ConsoleApprovalsOptions {
  prompt(question: string, signal: AbortSignal): Promise<string>;
  timeoutMs: number;
  /** Who the console user is, for the audit log. */
  operator: { id: string; name?: string };
}

/** Parses a terminal answer; undefined when it is none of yes / no / always. */
export function parseConsoleAnswer(answer: string): "approved" | "denied" | "always" | undefined {
  const a = answer.trim().toLowerCase();
  if (["y", "yes", "approve", "ok"].includes(a)) return "approved";
  if (["n", "no", "deny", ""].includes(a)) return "denied";
  if (["a", "always"].includes(a)) return "always";
  return undefined;
}

export function createConsoleApprovals(options: ConsoleApprovalsOptions): ApprovalManager {
  return {
    kind: "console",
    async request(req: ApprovalRequest): Promise<ApprovalDecision> {
      const card = approvalCardText({
        approvalId: req.callId,
        tool: req.tool,
        argsSummary: req.argsSummary,
        requester: req.requester,
        approvers: ["you"],
        expiresAt: Date.now() + options.timeoutMs,
        buttons: approvalButtons("console"),
      });
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), options.timeoutMs);
      const onAbort = () => controller.abort();
      req.signal.addEventListener("abort", onAbort, { once: true });
      try {
        let question = `${card}\nRun it? [y]es / [n]o / [a]lways: `;
        for (;;) {
          const answer = await options.prompt(question, controller.signal);
          const outcome = parseConsoleAnswer(answer);
          if (outcome) return { outcome, by: options.operator, source: "console" };
          question = "Please answer y (yes), n (no) or a (always): ";
        }
      } catch {
        if (req.signal.aborted) return { outcome: "cancelled", source: "cancelled" };
        return { outcome: "timeout", source: "timeout" };
      } finally {
        clearTimeout(timer);
        req.signal.removeEventListener("abort", onAbort);
      }
    },
  };
}
