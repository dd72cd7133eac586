/**
 * `gatehouse explain`: for one sender (and optionally one conversation), every tool with
 * whether it is offered, what approval it needs and which rule decided.
 */
import { explainApprovers } from "../approval/approver-rules.ts";
import { describeEgressRule, egressRuleLifted, type EgressRuleOptions } from "./egress.ts";
import type { ApprovalConfig, ToolPolicyConfig } from "./schema.ts";
import {
  approvalRequirement,
  toolAvailability,
  type ApprovalRequirement,
  type PolicySubject,
  type ToolDescriptor,
} from "./tool-policy.ts";

/** One tool's line in the explanation. */
export interface ExplainRow {
  tool: string;
  owner: string;
  offered: boolean;
  /** Absent when the tool is not offered. */
  approval?: ApprovalRequirement;
  /** The deciding rules: availability, then (when offered) approval. */
  rule: string;
  /** Who may approve its calls when a person must (approver rules). */
  approvers?: string;
}

/**
 * Explains the policy for `subject` over `descriptors`. `remembered` holds the names of tools
 * someone answered "always" for in the subject's scope; `http` is the http_fetch egress rule's
 * allow list (see egress.ts), which makes a fetch ask per URL.
 */
export function explainPolicy(
  tools: ToolPolicyConfig,
  approval: ApprovalConfig,
  descriptors: readonly ToolDescriptor[],
  subject: PolicySubject,
  remembered: ReadonlySet<string> = new Set(),
  http: { allowHosts?: readonly string[] } = {},
): ExplainRow[] {
  const egress: EgressRuleOptions = { allowHosts: http.allowHosts, approval };
  return [...descriptors]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((tool) => {
      const availability = toolAvailability(tools, approval, tool, subject);
      if (!availability.offered) return { tool: tool.name, owner: tool.owner, offered: false, rule: availability.rule };
      const decision = approvalRequirement(approval, tool, subject, remembered.has(tool.name));
      if (tool.name === "http_fetch" && tool.owner === "builtin" && decision.requirement !== "prompt" && !egressRuleLifted(egress)) {
        return {
          tool: tool.name, owner: tool.owner, offered: true, approval: "prompt", rule: `${availability.rule}; http_fetch ${describeEgressRule(egress)}`,
          approvers: explainApprovers(approval, tool, subject.channel, subject.conversationId),
        };
      }
      return {
        tool: tool.name,
        owner: tool.owner,
        offered: true,
        approval: decision.requirement,
        rule: `${availability.rule}; ${decision.rule}`,
        ...(decision.requirement === "prompt" ? { approvers: explainApprovers(approval, tool, subject.channel, subject.conversationId) } : {}),
      };
    });
}

/** Formats rows as an aligned plain-text table: tool, offered, approval, rule. */
export function formatExplain(rows: readonly ExplainRow[]): string {
  const table = [
    ["TOOL", "OFFERED", "APPROVAL", "RULE"],
    ...rows.map((r) => [r.tool, r.offered ? "yes" : "no", r.approval ?? "-", r.rule]),
  ];
  const widths = [0, 1, 2].map((col) => Math.max(...table.map((cells) => cells[col].length)));
  const lines = table.map((cells) => cells.map((cell, col) => (col < 3 ? cell.padEnd(widths[col]) : cell)).join("  "));
  const asking = rows.filter((r) => r.approvers);
  if (asking.length) lines.push("", "WHO MAY APPROVE", ...asking.map((r) => `${r.tool}: ${r.approvers}`));
  return lines.join("\n");
}
