/**
 * `gatehouse approvals suggest [--min N] [--no-mcp]`: reads the decision log and prints config rules
 * it supports (approval/suggest-rules.ts) as a fragment of the config file, after a comment block
 * with the evidence for each: how many requests, who approved them, when last. The risk of each
 * tool comes from the built-in tools and, unless --no-mcp, from the configured MCP servers' own
 * listings (started for the purpose, as `gatehouse explain` does).
 */
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { readDecisionLog, personLabel } from "../approval/decision-log.ts";
import { approverRuleOf, RuleEvidence, type RuleSuggestion, type ToolRiskInfo } from "../approval/suggest-rules.ts";
import { canonicalJson } from "../observe/canonical-json.ts";
import { silentLogger } from "../observe/logger.ts";
import { openStore } from "../store/open-store.ts";
import { builtinTools } from "../tools/builtin/index.ts";
import { DEFAULT_BACKOFF, McpServerConnection } from "../tools/mcp/connection.ts";
import { mcpToolName } from "../tools/mcp/mcp-tool.ts";
import { mcpToolRisk } from "../tools/mcp/risk.ts";
import { readArgs } from "./args.ts";

const USAGE = "usage: gatehouse approvals suggest [--min N] [--no-mcp]\n";

/** `approvals suggest`. */
export async function runApprovalsSuggest(argv: string[]): Promise<number> {
  const { values, positionals } = readArgs(argv, { min: { type: "string" }, "no-mcp": { type: "boolean" } });
  const min = values.min === undefined ? 5 : Number(values.min);
  if (positionals.length || !Number.isInteger(min) || min < 1) {
    process.stderr.write(`${positionals.length ? `gatehouse approvals: unexpected "${positionals[0]}"` : `gatehouse approvals: --min must be a whole number, 1 or more (not "${String(values.min)}")`}\n${USAGE}`);
    return 2;
  }
  const config = loadConfig();
  const tools = await toolRisks(config, !values["no-mcp"]);
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const evidence = new RuleEvidence();
  try {
    for await (const entry of readDecisionLog(store)) evidence.add(entry);
  } finally {
    await store.close();
  }
  const existing = new Set(config.approval.rules.map((r) => ruleKey(r.tools, r.when)));
  const suggestions = evidence
    .suggestions(min, tools, config.approval)
    .filter((s) => s.kind === "autoApprove" ? !config.approval.autoApprove.includes(s.tool) : !existing.has(ruleKey([s.tool], s.when ? [s.when] : [])));
  if (!suggestions.length) {
    process.stdout.write(
      `No rule to suggest: no tool or command was approved by a person in ${min} or more requests without a denial, timeout or refusal.\n`,
    );
    return 0;
  }
  process.stdout.write(formatSuggestions(suggestions, config, min));
  return 0;
}

/** The risk of every tool the bot would offer: the built-ins, and the MCP servers' tools when asked. */
async function toolRisks(config: Config, withMcp: boolean): Promise<Map<string, ToolRiskInfo>> {
  const risks = new Map<string, ToolRiskInfo>();
  for (const t of builtinTools({ workspace: config.workspace!, http: config.http, shell: config.shell })) risks.set(t.name, { risk: t.risk, owner: t.owner });
  risks.set("tool_search", { risk: "read", owner: "builtin" });
  if (!withMcp) return risks;
  const connections = Object.entries(config.mcp.servers).map(([name, server]) => new McpServerConnection(name, server, silentLogger(), DEFAULT_BACKOFF, config.workspace));
  try {
    await Promise.all(connections.map((c) => c.connect()));
    for (const c of connections) {
      for (const listing of c.listing) {
        const name = mcpToolName(c.name, listing.name);
        const a = listing.annotations;
        // MCP's defaults: a tool not marked read-only may destroy unless it says destructiveHint: false.
        const destructive = !(a?.readOnlyHint === true || a?.destructiveHint === false);
        risks.set(name, { risk: mcpToolRisk(c.config, listing.name, name, a), owner: `mcp:${c.name}`, destructive });
      }
    }
  } finally {
    await Promise.all(connections.map((c) => c.close()));
  }
  return risks;
}

function ruleKey(tools: readonly string[], when: readonly unknown[]): string {
  return canonicalJson({ tools, when });
}

/** Names from a platform on one line: a comment block must not be broken by them. */
function clean(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, " ");
}

/** The comment block with the evidence, then the config fragment. */
export function formatSuggestions(suggestions: RuleSuggestion[], config: Pick<Config, "approval">, min: number): string {
  const lines = [
    `// ${suggestions.length} ${suggestions.length === 1 ? "rule" : "rules"} suggested by the decision log: each for ${min} or more requests that a person approved every time.`,
    "//",
  ];
  for (const s of suggestions) {
    const what = s.kind === "autoApprove"
      ? `approval.autoApprove "${s.tool}"`
      : `approval.rules: ${s.tool}${s.when ? ` when ${s.when.arg} matches ${s.when.matches}` : ""} → ${s.approvers.map((a) => a.id).join(", ")}`;
    const who = s.approvers.map((a) => `${clean(personLabel(a.id, a.name) ?? a.id)} ×${a.approvals}`).join(", ");
    const self = s.selfApproved ? `; ${s.selfApproved} approved by the person who asked` : "";
    lines.push(`// ${clean(what)}`);
    lines.push(`//   ${s.count} requests, all approved: ${who}; last seen ${new Date(s.lastSeen).toISOString()}${self}`);
    lines.push(`//   ${s.note}`);
  }
  const autoApprove = suggestions.filter((s) => s.kind === "autoApprove").map((s) => s.tool);
  const rules = suggestions.filter((s) => s.kind === "approverRule").map(approverRuleOf);
  lines.push("//");
  if (autoApprove.length) lines.push("// autoApprove below is the current list with the suggested tools added.");
  if (rules.length) lines.push("// Add the rules to approval.rules: the first rule that matches a call decides, so place them among yours.");
  const fragment = {
    approval: {
      ...(autoApprove.length ? { autoApprove: [...config.approval.autoApprove, ...autoApprove] } : {}),
      ...(rules.length ? { rules } : {}),
    },
  };
  return `${lines.join("\n")}\n${JSON.stringify(fragment, null, 2)}\n`;
}
