/**
 * Start-up checks of `approval.rules`: a rule that names no known tool, a quorum larger than the
 * people who may approve, a route without its channel, or a group or role the platform does not
 * know is refused with the key and the fix, like any other configuration error. Patterns for MCP
 * tools are not checked against the catalog: a server that failed to start must not stop the bot.
 */
import { firstMatchingPattern, type ToolIdentity } from "../policy/glob.ts";
import type { ApprovalConfig } from "../policy/schema.ts";
import type { ApproverGroups } from "../ports.ts";
import { closestName } from "../edit-distance.ts";

const isMcpPattern = (pattern: string) => pattern.startsWith("mcp:") || pattern.includes("__");


/** Problems with the rules that the config alone shows (tools, quorum, routes), one line each. */
export function approverRuleProblems(approval: ApprovalConfig, tools: readonly ToolIdentity[]): string[] {
  const problems: string[] = [];
  const names = tools.map((t) => t.name);
  approval.rules.forEach((rule, i) => {
    const key = `approval.rules[${i}]`;
    for (const pattern of rule.tools) {
      if (isMcpPattern(pattern) || tools.some((tool) => firstMatchingPattern([pattern], tool))) continue;
      const guess = closestName(pattern, names);
      problems.push(
        `${key}.tools: "${pattern}" names no tool${guess ? ` (did you mean "${guess}"?)` : ""}; known tools: ${names.join(", ")}`,
      );
    }
    const grouped = rule.approvers.groups.length > 0 || rule.approvers.roles.length > 0 || rule.approvers.chatAdmins;
    const people = new Set(rule.approvers.users).size + (rule.selfApprove ? 1 : 0);
    if (!grouped && rule.quorum > people) {
      const who = [...rule.approvers.users, ...(rule.selfApprove ? ["the requester"] : [])];
      problems.push(
        `${key}.quorum: ${rule.quorum} different people must approve, but only ${people} may (${who.join(", ") || "nobody"}); ` +
          `add approvers.users, groups or roles, or lower the quorum`,
      );
    }
    if (!grouped && people === 0) {
      problems.push(`${key}.approvers: nobody may approve (selfApprove is false and no users, groups or roles are named); name who approves`);
    }
    if (rule.routeTo && rule.channels?.length !== 1) {
      problems.push(`${key}.routeTo: a conversation id belongs to one channel; add channels: ["<that channel>"] to the rule`);
    }
  });
  return problems;
}

/** A channel that can say which approver groups and roles it knows. */
export interface GroupChecker {
  channel: string;
  unknownApproverGroups?(of: ApproverGroups): Promise<string[]>;
}

/**
 * Groups and roles no channel the rule applies to knows, as problems. A channel that cannot tell
 * (the console) is not asked; when none of a rule's channels can, the rule is not checked.
 */
export async function unknownGroupProblems(approval: ApprovalConfig, channels: readonly GroupChecker[]): Promise<string[]> {
  const problems: string[] = [];
  for (const [i, rule] of approval.rules.entries()) {
    const of: ApproverGroups = { groups: rule.approvers.groups, roles: rule.approvers.roles, chatAdmins: false };
    if (!of.groups.length && !of.roles.length) continue;
    const asked = channels.filter((c) => c.unknownApproverGroups && (!rule.channels || rule.channels.includes(c.channel)));
    if (!asked.length) continue;
    const unknownEverywhere = new Set([...of.groups, ...of.roles]);
    for (const channel of asked) {
      let unknown: Set<string>;
      try {
        unknown = new Set(await channel.unknownApproverGroups!(of));
      } catch (err) {
        problems.push(`approval.rules[${i}].approvers: ${channel.channel} could not check the groups and roles named: ${(err as Error).message}`);
        unknownEverywhere.clear();
        break;
      }
      for (const id of [...unknownEverywhere]) if (!unknown.has(id)) unknownEverywhere.delete(id);
    }
    for (const id of unknownEverywhere) {
      const where = of.groups.includes(id) ? "groups" : "roles";
      problems.push(
        `approval.rules[${i}].approvers.${where}: "${id}" is not known on ${asked.map((c) => c.channel).join(" or ")}; ` +
          `use a Slack user group id (S…) or a Discord role id the bot can see`,
      );
    }
  }
  return problems;
}
