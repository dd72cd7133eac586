import { describe, expect, it } from "vitest";
import { approversFor, explainApprovers } from "../../src/approval/approver-rules.ts";
import { approverRuleProblems, unknownGroupProblems } from "../../src/approval/rule-checks.ts";
import { ApprovalConfigSchema } from "../../src/policy/schema.ts";

const shell = { name: "shell", owner: "builtin" };
const write = { name: "write_file", owner: "builtin" };
const tools = [shell, write, { name: "current_time", owner: "builtin" }];

const approval = ApprovalConfigSchema.parse({
  approvers: { slack: ["UADMIN"] },
  rules: [
    {
      name: "kubectl changes",
      tools: ["shell"],
      when: [{ arg: "command", matches: "^kubectl (delete|apply)\\b" }],
      approvers: { users: ["UOPS1", "UOPS2"], groups: ["S0SRE"] },
      selfApprove: false,
      quorum: 2,
      channels: ["slack"],
      routeTo: { conversation: "C0APPROVALS", label: "#ops-approvals" },
    },
    { tools: ["write_file"], when: [{ arg: "path", glob: "/etc/*" }], approvers: { users: ["UROOT"] } },
    { tools: ["shell"], approvers: { roles: ["9001"] }, channels: ["discord"] },
  ],
});

const call = (tool: typeof shell, args: Record<string, unknown>, channel = "slack") => ({ tool, args, channel, conversationId: "C1" });

describe("approver rules", () => {
  it("lets the first matching rule decide who approves, with its quorum and route", () => {
    const set = approversFor(approval, call(shell, { command: "kubectl delete pod web-1" }));
    expect(set).toMatchObject({
      rule: "kubectl changes", users: ["UOPS1", "UOPS2"], groups: ["S0SRE"], selfApprove: false, quorum: 2,
      routeTo: { conversation: "C0APPROVALS", label: "#ops-approvals" },
    });
  });

  it("falls back to the requester and the channel's approvers when no condition holds", () => {
    const set = approversFor(approval, call(shell, { command: "kubectl get pods" }));
    expect(set).toMatchObject({ rule: "approval.approvers.slack", users: ["UADMIN"], selfApprove: true, quorum: 1 });
    expect(set.routeTo).toBeUndefined();
  });

  it("matches a glob against the whole argument and a missing argument never matches", () => {
    expect(approversFor(approval, call(write, { path: "/etc/hosts" })).rule).toBe("approval.rules[1]");
    expect(approversFor(approval, call(write, { path: "/home/etc/hosts" })).rule).toBe("approval.approvers.slack");
    expect(approversFor(approval, call(write, {})).rule).toBe("approval.approvers.slack");
  });

  it("lets a glob's run of characters span lines, so a line break cannot slip a call past its rule", () => {
    expect(approversFor(approval, call(write, { path: "/etc/a\nb" })).rule).toBe("approval.rules[1]");
    const rm = ApprovalConfigSchema.parse({ rules: [{ name: "rm", tools: ["shell"], when: [{ arg: "command", glob: "*rm *" }], approvers: { users: ["UOPS1"] }, selfApprove: false }] });
    expect(approversFor(rm, call(shell, { command: "echo hi\nrm -rf build" })).rule).toBe("rm");
  });

  it("applies a rule only on its channels", () => {
    expect(approversFor(approval, call(shell, { command: "ls" }, "discord"))).toMatchObject({ rule: "approval.rules[2]", roles: ["9001"] });
    expect(approversFor(approval, call(shell, { command: "kubectl apply -f x" }, "discord")).rule).toBe("approval.rules[2]");
  });

  it("explains conditional rules before the one that decides otherwise", () => {
    expect(explainApprovers(approval, shell, "slack", "C1")).toBe(
      "when command matches /^kubectl (delete|apply)\\b/: kubectl changes (UOPS1, UOPS2, group S0SRE; not the requester; " +
        "2 different people must approve; asked in #ops-approvals); otherwise approval.approvers.slack (the requester, UADMIN)",
    );
    expect(explainApprovers(approval, shell, "discord", "G1")).toBe("approval.rules[2] (the requester, role 9001)");
  });
});

describe("approver rules refused at start", () => {
  it("names a rule whose tool pattern matches no tool, with the likely fix", () => {
    const config = ApprovalConfigSchema.parse({ rules: [{ tools: ["shel"], approvers: { users: ["U1"] } }] });
    expect(approverRuleProblems(config, tools)).toEqual([
      'approval.rules[0].tools: "shel" names no tool (did you mean "shell"?); known tools: shell, write_file, current_time',
    ]);
  });

  it("does not check MCP tool patterns against the catalog (a server may be down)", () => {
    const config = ApprovalConfigSchema.parse({ rules: [{ tools: ["mcp:github__*"], approvers: { users: ["U1"] } }] });
    expect(approverRuleProblems(config, tools)).toEqual([]);
  });

  it("refuses a quorum larger than the people who may approve", () => {
    const config = ApprovalConfigSchema.parse({ rules: [{ tools: ["shell"], approvers: { users: ["U1"] }, selfApprove: false, quorum: 2 }] });
    expect(approverRuleProblems(config, tools)).toEqual([
      "approval.rules[0].quorum: 2 different people must approve, but only 1 may (U1); add approvers.users, groups or roles, or lower the quorum",
    ]);
  });

  it("refuses a route without its one channel", () => {
    const config = ApprovalConfigSchema.parse({ rules: [{ tools: ["shell"], routeTo: { conversation: "C9" } }] });
    expect(approverRuleProblems(config, tools)).toEqual([
      'approval.rules[0].routeTo: a conversation id belongs to one channel; add channels: ["<that channel>"] to the rule',
    ]);
  });

  it("refuses an invalid regular expression when the config is read", () => {
    const parsed = ApprovalConfigSchema.safeParse({ rules: [{ tools: ["shell"], when: [{ arg: "command", matches: "(unclosed" }] }] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ["rules", 0, "when", 0, "matches"], message: "not a valid regular expression" });
  });

  it("refuses a group no channel of the rule knows, and asks only channels that can tell", async () => {
    const config = ApprovalConfigSchema.parse({ rules: [{ tools: ["shell"], approvers: { groups: ["S0SRE", "S0TYPO"] } }] });
    const slack = { channel: "slack", unknownApproverGroups: async () => ["S0TYPO"] };
    const consoleChannel = { channel: "console" };
    expect(await unknownGroupProblems(config, [slack, consoleChannel])).toEqual([
      'approval.rules[0].approvers.groups: "S0TYPO" is not known on slack; use a Slack user group id (S…) or a Discord role id the bot can see',
    ]);
    expect(await unknownGroupProblems(config, [consoleChannel])).toEqual([]);
  });
});
