/**
 * Approver rules: who may approve a call that needs a person. `approval.rules` is an ordered list;
 * the first rule whose tool patterns, argument conditions, channels and conversations all match
 * the call decides. With none, the requester and the channel's `approval.approvers` may.
 */
import { firstMatchingPattern, globMatches, type ToolIdentity } from "../policy/glob.ts";
import type { ApprovalConfig, ApproverRule } from "../policy/schema.ts";

/** Who may approve one call, and how many of them must. */
export interface ApproverSet {
  /** The deciding rule, as `gatehouse explain` and the audit log name it. */
  rule: string;
  users: string[];
  groups: string[];
  roles: string[];
  chatAdmins: boolean;
  /** Whether the person who asked may approve their own call. */
  selfApprove: boolean;
  /** Different people who must approve. */
  quorum: number;
  routeTo?: { conversation: string; label?: string };
}

/** The call a rule is matched against. */
export interface RuleSubject {
  tool: ToolIdentity;
  args: Record<string, unknown>;
  channel: string;
  conversationId: string;
}

const compiled = new Map<string, RegExp>();

function regexOf(source: string): RegExp {
  let re = compiled.get(source);
  if (!re) {
    re = new RegExp(source);
    compiled.set(source, re);
  }
  return re;
}

/** An argument as a condition reads it: strings as they are, anything else as its JSON. */
function argumentText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A rule's label: its name, or its place in the list. */
export function ruleLabel(rule: ApproverRule, index: number): string {
  return rule.name ?? `approval.rules[${index}]`;
}

/** Whether `rule` covers the call. */
export function ruleMatches(rule: ApproverRule, subject: RuleSubject): boolean {
  if (!firstMatchingPattern(rule.tools, subject.tool)) return false;
  if (rule.channels && !rule.channels.includes(subject.channel)) return false;
  if (rule.conversations) {
    const ids = [subject.conversationId, `${subject.channel}:${subject.conversationId}`];
    if (!rule.conversations.some((c) => ids.includes(c))) return false;
  }
  return rule.when.every((condition) => {
    const text = argumentText(subject.args[condition.arg]);
    if (text === undefined) return false;
    return condition.matches !== undefined ? regexOf(condition.matches).test(text) : globMatches(condition.glob!, text);
  });
}

/** Who may approve the call: the first matching rule, else the requester and the channel's admins. */
export function approversFor(approval: ApprovalConfig, subject: RuleSubject): ApproverSet {
  const index = approval.rules.findIndex((rule) => ruleMatches(rule, subject));
  return index < 0 ? defaultApprovers(approval, subject.channel) : approversOf(approval.rules[index]!, index);
}

/** Who may approve where no rule matches: the requester and `approval.approvers.<channel>`. */
function defaultApprovers(approval: ApprovalConfig, channel: string): ApproverSet {
  return {
    rule: `approval.approvers.${channel}`, users: approval.approvers[channel] ?? [],
    groups: [], roles: [], chatAdmins: false, selfApprove: true, quorum: 1,
  };
}

/** Who may approve the calls one rule covers. */
function approversOf(rule: ApproverRule, index: number): ApproverSet {
  return {
    rule: ruleLabel(rule, index),
    users: rule.approvers.users,
    groups: rule.approvers.groups,
    roles: rule.approvers.roles,
    chatAdmins: rule.approvers.chatAdmins,
    selfApprove: rule.selfApprove,
    quorum: rule.quorum,
    routeTo: rule.routeTo,
  };
}

/** Whether the set names anyone beyond listed users (a platform must be asked about membership). */
export function namesGroups(set: Pick<ApproverSet, "groups" | "roles" | "chatAdmins">): boolean {
  return set.groups.length > 0 || set.roles.length > 0 || set.chatAdmins;
}

/** Who may approve, as a person reads it: "the requester, U1, group S1, role 9, chat admins; 2 approvals needed". */
export function describeApprovers(set: ApproverSet): string {
  const who = [
    ...(set.selfApprove ? ["the requester"] : []),
    ...set.users,
    ...set.groups.map((g) => `group ${g}`),
    ...set.roles.map((r) => `role ${r}`),
    ...(set.chatAdmins ? ["chat admins"] : []),
  ];
  const parts = [who.length ? who.join(", ") : "nobody"];
  if (!set.selfApprove) parts.push("not the requester");
  if (set.quorum > 1) parts.push(`${set.quorum} different people must approve`);
  if (set.routeTo) parts.push(`asked in ${set.routeTo.label ?? set.routeTo.conversation}`);
  return parts.join("; ");
}

/**
 * Who may approve a tool's calls on a channel, for `gatehouse explain`: the rules with argument
 * conditions that may decide first, then the rule (or default) that decides otherwise.
 */
export function explainApprovers(approval: ApprovalConfig, tool: ToolIdentity, channel: string, conversationId?: string): string {
  const parts: string[] = [];
  const subject = { tool, args: {}, channel, conversationId: conversationId ?? "" };
  for (const [index, rule] of approval.rules.entries()) {
    // Argument conditions (and, without a conversation, the rule's conversations) are named, not tested.
    const open = conversationId === undefined ? { ...rule, when: [], conversations: undefined } : { ...rule, when: [] };
    if (!ruleMatches(open, subject)) continue;
    const set = approversOf(rule, index);
    const conditions = rule.when.map((c) => `${c.arg} ${c.matches !== undefined ? `matches /${c.matches}/` : `is like "${c.glob}"`}`);
    if (conversationId === undefined && rule.conversations) conditions.push(`in ${rule.conversations.join(", ")}`);
    if (conditions.length) {
      parts.push(`when ${conditions.join(" and ")}: ${set.rule} (${describeApprovers(set)})`);
      continue;
    }
    parts.push(`${parts.length ? "otherwise " : ""}${set.rule} (${describeApprovers(set)})`);
    return parts.join("; ");
  }
  const fallback = defaultApprovers(approval, channel);
  parts.push(`${parts.length ? "otherwise " : ""}${fallback.rule} (${describeApprovers(fallback)})`);
  return parts.join("; ");
}

/** Why nobody could decide a request under `set`, if so (a rule the start-up checks let through, a schedule's call). */
export function nobodyToAsk(set: ApproverSet, admins: string[], selfApprove: boolean, channel: string): string | undefined {
  if (namesGroups(set)) return undefined;
  const people = admins.length + (selfApprove ? 1 : 0);
  if (people === 0) {
    return set.rule === `approval.approvers.${channel}`
      ? `nobody may approve it: list approvers in approval.approvers.${channel}`
      : `nobody may approve it: ${set.rule} names no approver besides the requester`;
  }
  if (people < set.quorum) return `${set.rule} needs ${set.quorum} different people to approve, but only ${people} may`;
  return undefined;
}
