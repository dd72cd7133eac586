import { describe, expect, it } from "vitest";
import { explainPolicy, formatExplain } from "../../src/policy/explain.ts";
import { ApprovalConfigSchema, ToolPolicyConfigSchema } from "../../src/policy/schema.ts";
import type { ToolDescriptor } from "../../src/policy/tool-policy.ts";

const descriptors: ToolDescriptor[] = [
  { name: "shell", risk: "exec", owner: "builtin" },
  { name: "read_file", risk: "read", owner: "builtin" },
  { name: "write_file", risk: "write", owner: "builtin" },
  { name: "github__create_issue", risk: "write", owner: "mcp:github" },
];

describe("explain", () => {
  const tools = ToolPolicyConfigSchema.parse({ deny: ["mcp:github__*"] });
  const approval = ApprovalConfigSchema.parse({});
  const subject = { channel: "slack", senderId: "U123", conversationId: "C1" };

  it("lists every tool with whether it is offered, its approval and the deciding rule", () => {
    const rows = explainPolicy(tools, approval, descriptors, subject, new Set(["write_file"]));
    expect(rows).toEqual([
      { tool: "github__create_issue", owner: "mcp:github", offered: false, rule: 'tools.deny "mcp:github__*"' },
      {
        tool: "read_file",
        owner: "builtin",
        offered: true,
        approval: "not-required",
        rule: 'profile "standard"; autonomy "supervised" (read tool)',
      },
      { tool: "shell", owner: "builtin", offered: false, rule: "tools.elevated.allowFrom (sender not listed)" },
      {
        tool: "write_file",
        owner: "builtin",
        offered: true,
        approval: "approved-by-policy",
        rule: 'profile "standard"; remembered "always"',
      },
    ]);
  });

  it("prompts for a write tool nobody answered always for", () => {
    const rows = explainPolicy(tools, approval, descriptors, subject);
    expect(rows.find((r) => r.tool === "write_file")?.approval).toBe("prompt");
  });

  it("formats an aligned table with a header", () => {
    const text = formatExplain(explainPolicy(tools, approval, descriptors, subject));
    const [tableText, approversText] = text.split("\n\n");
    const lines = tableText!.split("\n");
    expect(lines[0]).toMatch(/^TOOL\s+OFFERED\s+APPROVAL\s+RULE$/);
    expect(lines).toHaveLength(5);
    const ruleColumn = lines[0].indexOf("RULE");
    for (const line of lines.slice(1)) expect(line.slice(ruleColumn - 2, ruleColumn)).toBe("  ");
    expect(approversText).toBe("WHO MAY APPROVE\nwrite_file: approval.approvers.slack (the requester)");
    expect(lines[1]).toMatch(/^github__create_issue\s+no\s+-\s+tools\.deny "mcp:github__\*"$/);
    expect(lines[4]).toMatch(/^write_file\s+yes\s+prompt\s+profile "standard"; autonomy "supervised" \(write tool\)$/);
  });
});
