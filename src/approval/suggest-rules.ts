/**
 * Config rules suggested by the decision log (`gatehouse approvals suggest`). Decisions on calls a
 * person was asked about are grouped by tool, and for a tool that takes a command (shell's
 * `command`) by the command's leading words (`^\s*kubectl\s+get\b`). A group of at least N requests
 * that were all approved by a person (none denied, timed out or refused for want of someone to
 * ask) becomes a suggestion:
 * - for a tool that only reads, or an MCP tool its server marks neither destructive nor writing, an
 *   `approval.autoApprove` entry (it then runs without a card);
 * - for everything else (exec tools such as shell, file writes, MCP tools that may destroy, tools
 *   whose risk is not known here, and command patterns, which autoApprove cannot express), an
 *   approver rule naming the people who approved them: never an approval by policy.
 * Decisions made by policy, a remembered "Always" or a cancellation say nothing of what people
 * approve and are left out.
 */
import { canonicalJson } from "../observe/canonical-json.ts";
import { firstMatchingPattern } from "../policy/glob.ts";
import type { ToolRisk } from "../tools/tool.ts";
import type { AuditEntry } from "../store/store.ts";
import { decidedByPerson } from "./decision-log.ts";
import { parseArgsSummary } from "./summary.ts";

/** What suggestions need to know of a tool. */
export interface ToolRiskInfo {
  risk: ToolRisk;
  /** `builtin` or `mcp:<server>`. */
  owner: string;
  /** The tool may delete or overwrite (an MCP tool not marked `destructiveHint: false` or read-only); undefined: not known. */
  destructive?: boolean;
}

/** A suggested rule and the evidence for it. */
export interface RuleSuggestion {
  kind: "autoApprove" | "approverRule";
  tool: string;
  /** For a command tool: the argument and the pattern its value matched. */
  when?: { arg: string; matches: string };
  /** Requests in the group (all approved). */
  count: number;
  /** Who approved, most approvals first. */
  approvers: Array<{ id: string; name?: string; approvals: number }>;
  /** Approvals given by the person who asked. */
  selfApproved: number;
  lastSeen: number;
  /** Why it is an approver rule rather than an autoApprove entry, or what else to change. */
  note: string;
}

/** Arguments that hold a command line, in the order they are looked for. */
const COMMAND_ARGS = ["command", "cmd"];

interface Group {
  tool: string;
  when?: { arg: string; matches: string };
  count: number;
  refused: number;
  approvers: Map<string, { name?: string; approvals: number }>;
  selfApproved: number;
  lastSeen: number;
}

/** Collects the decision log's evidence, one entry at a time (a long log is never held whole). */
export class RuleEvidence {
  readonly #groups = new Map<string, Group>();

  /** Takes one entry of the log into account; entries that are not decisions a person was asked for are skipped. */
  add(entry: AuditEntry): void {
    if (entry.kind !== "approval.decided" || !entry.tool) return;
    if (entry.source === "policy" || entry.source === "always" || entry.outcome === "cancelled" || entry.source === "cancelled") return;
    const when = commandPattern(entry.argsSummary);
    const key = canonicalJson([entry.tool, when ?? null]);
    let group = this.#groups.get(key);
    if (!group) {
      group = { tool: entry.tool, when, count: 0, refused: 0, approvers: new Map(), selfApproved: 0, lastSeen: 0 };
      this.#groups.set(key, group);
    }
    group.count++;
    group.lastSeen = Math.max(group.lastSeen, entry.at);
    const approved = decidedByPerson(entry) && (entry.outcome === "approved" || entry.outcome === "always");
    const by = entry.decidedById ?? entry.actorId;
    if (!approved || by === undefined) {
      group.refused++;
      return;
    }
    const known = group.approvers.get(by) ?? { approvals: 0 };
    group.approvers.set(by, { name: entry.decidedByName ?? entry.actorName ?? known.name, approvals: known.approvals + 1 });
    if (entry.requesterId !== undefined && entry.requesterId === by) group.selfApproved++;
  }

  /** The groups of at least `min` requests that people approved every time, as suggestions. */
  suggestions(min: number, tools: ReadonlyMap<string, ToolRiskInfo>, approval: { alwaysAsk: readonly string[] }): RuleSuggestion[] {
    const out: RuleSuggestion[] = [];
    for (const g of this.#groups.values()) {
      if (g.count < min || g.refused > 0) continue;
      const info = tools.get(g.tool);
      const notAuto = whyNotAutoApproved(info) ?? (g.when ? "autoApprove cannot look at arguments" : undefined);
      const approvers = [...g.approvers].map(([id, a]) => ({ id, ...a })).sort((a, b) => b.approvals - a.approvals || (a.id < b.id ? -1 : 1));
      const base = { tool: g.tool, when: g.when, count: g.count, approvers, selfApproved: g.selfApproved, lastSeen: g.lastSeen };
      if (notAuto) {
        out.push({ kind: "approverRule", ...base, note: `${notAuto}: never approved by policy; this rule only says who may approve` });
        continue;
      }
      const asked = firstMatchingPattern(approval.alwaysAsk, { name: g.tool, owner: info!.owner });
      out.push({
        kind: "autoApprove", ...base,
        note: asked === undefined ? "it runs without a card once approved by policy" : `also remove "${asked}" from approval.alwaysAsk, which autoApprove does not override`,
      });
    }
    return out.sort((a, b) => b.count - a.count || (a.tool < b.tool ? -1 : 1));
  }
}

/** Why a tool must not be approved by policy; undefined when it may be. */
export function whyNotAutoApproved(info: ToolRiskInfo | undefined): string | undefined {
  if (!info) return "its risk is not known here (the tool is not configured, or its MCP server did not answer)";
  if (info.risk === "exec") return "it runs commands";
  if (info.risk === "read") return undefined;
  if (info.owner === "builtin") return "it writes files";
  if (info.destructive !== false) return "its MCP server does not mark it as never destructive";
  return undefined;
}

/** The leading-words pattern of a call's command, when its summary shows one. */
function commandPattern(summary: string | undefined): { arg: string; matches: string } | undefined {
  if (!summary) return undefined;
  const parsed = parseArgsSummary(summary);
  let args: unknown;
  try {
    args = JSON.parse(parsed.args);
  } catch {
    return undefined; // cut short: the command is not known whole
  }
  if (!args || typeof args !== "object") return undefined;
  for (const arg of COMMAND_ARGS) {
    const value = (args as Record<string, unknown>)[arg];
    if (typeof value !== "string") continue;
    const matches = leadingWordsPattern(value);
    if (matches) return { arg, matches };
  }
  return undefined;
}

/**
 * A pattern for the command's program and, when the next word is a plain word, its subcommand:
 * "kubectl get pods -n prod" → `^\s*kubectl\s+get\b`.
 */
export function leadingWordsPattern(command: string): string | undefined {
  const [program, sub] = command.trim().split(/\s+/);
  if (!program || program.includes("[redacted]")) return undefined;
  const words = sub && /^[A-Za-z][\w.:-]*$/.test(sub) ? [program, sub] : [program];
  const body = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s+");
  return `^\\s*${body}${/\w$/.test(words.at(-1)!) ? "\\b" : "(?=\\s|$)"}`;
}

/** An approver rule in the config's shape (`approval.rules[]`). */
export function approverRuleOf(s: RuleSuggestion): Record<string, unknown> {
  return {
    tools: [s.tool],
    ...(s.when ? { when: [s.when] } : {}),
    approvers: { users: s.approvers.map((a) => a.id) },
    selfApprove: s.selfApproved > 0,
    quorum: 1,
  };
}
