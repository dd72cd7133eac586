import { describe, expect, it } from "vitest";
import { ApprovalConfigSchema, ToolPolicyConfigSchema } from "../../src/policy/schema.ts";
import { approvalRequirement, toolAvailability, type PolicySubject, type ToolDescriptor } from "../../src/policy/tool-policy.ts";

const tools = (input: unknown = {}) => ToolPolicyConfigSchema.parse(input);
const approval = (input: unknown = {}) => ApprovalConfigSchema.parse(input);

const currentTime: ToolDescriptor = { name: "current_time", risk: "read", owner: "builtin" };
const readFile: ToolDescriptor = { name: "read_file", risk: "read", owner: "builtin" };
const writeFile: ToolDescriptor = { name: "write_file", risk: "write", owner: "builtin" };
const shell: ToolDescriptor = { name: "shell", risk: "exec", owner: "builtin" };
const createIssue: ToolDescriptor = { name: "github__create_issue", risk: "write", owner: "mcp:github" };
const listIssues: ToolDescriptor = { name: "github__list_issues", risk: "read", owner: "mcp:github" };
const jiraSearch: ToolDescriptor = { name: "jira__search", risk: "read", owner: "mcp:jira" };

const alice: PolicySubject = { channel: "slack", senderId: "U1", conversationId: "C1" };
const bob: PolicySubject = { channel: "slack", senderId: "U2", conversationId: "C1" };
const local: PolicySubject = { channel: "console", senderId: "local" };

const offered = (t: ReturnType<typeof tools>, tool: ToolDescriptor, subject: PolicySubject, a = approval()) =>
  toolAvailability(t, a, tool, subject);

describe("profiles", () => {
  it("offers the standard tools, MCP tools included, by default", () => {
    for (const tool of [currentTime, readFile, writeFile, createIssue]) {
      expect(offered(tools(), tool, alice)).toEqual({ offered: true, rule: 'profile "standard"' });
    }
  });

  it("leaves out tools the standard profile does not name", () => {
    const schedule: ToolDescriptor = { name: "schedule_job", risk: "write", owner: "builtin" };
    expect(offered(tools(), schedule, alice)).toEqual({ offered: false, rule: 'profile "standard"' });
    expect(offered(tools({ profile: "full" }), schedule, alice).offered).toBe(true);
  });

  it("offers only current_time and tool_search in the messaging profile", () => {
    const t = tools({ profile: "messaging" });
    expect(offered(t, currentTime, alice).offered).toBe(true);
    expect(offered(t, { name: "tool_search", risk: "read", owner: "builtin" }, alice).offered).toBe(true);
    expect(offered(t, readFile, alice)).toEqual({ offered: false, rule: 'profile "messaging"' });
  });

  it("offers only current_time in the minimal profile", () => {
    const t = tools({ profile: "minimal" });
    expect(offered(t, currentTime, alice).offered).toBe(true);
    expect(offered(t, { name: "tool_search", risk: "read", owner: "builtin" }, alice).offered).toBe(false);
  });
});

describe("allow and deny lists", () => {
  it("blocks every tool not on a non-empty allow list", () => {
    const t = tools({ allow: ["read_file"] });
    expect(offered(t, readFile, alice)).toEqual({ offered: true, rule: 'tools.allow "read_file"' });
    expect(offered(t, currentTime, alice)).toEqual({ offered: false, rule: "tools.allow (not listed)" });
  });

  it("does not widen the profile with an allow list", () => {
    const t = tools({ profile: "minimal", allow: ["read_file"] });
    expect(offered(t, readFile, alice)).toEqual({ offered: false, rule: 'profile "minimal"' });
  });

  it("matches one MCP server's tools with mcp:<server>__* and all of them with mcp:*", () => {
    const oneServer = tools({ allow: ["mcp:github__*"] });
    expect(offered(oneServer, createIssue, alice).offered).toBe(true);
    expect(offered(oneServer, jiraSearch, alice).offered).toBe(false);
    const noMcp = tools({ deny: ["mcp:*"] });
    expect(offered(noMcp, jiraSearch, alice)).toEqual({ offered: false, rule: 'tools.deny "mcp:*"' });
    expect(offered(noMcp, readFile, alice).offered).toBe(true);
  });

  it("lets a deny win over an allow of the same tool", () => {
    const t = tools({ allow: ["*"], deny: ["write_file"] });
    expect(offered(t, writeFile, alice)).toEqual({ offered: false, rule: 'tools.deny "write_file"' });
  });

  it("lets a global deny win over a sender's and a conversation's allow", () => {
    const t = tools({
      deny: ["write_file"],
      bySender: { "slack:U1": { allow: ["write_file"] } },
      byConversation: { "slack:C1": { allow: ["write_file"], bySender: { "slack:U1": { allow: ["write_file"] } } } },
    });
    expect(offered(t, writeFile, alice)).toEqual({ offered: false, rule: 'tools.deny "write_file"' });
  });

  it("lets a sender's deny win over the global allow", () => {
    const t = tools({ allow: ["read_file", "write_file"], bySender: { "slack:U1": { deny: ["write_file"] } } });
    expect(offered(t, writeFile, alice)).toEqual({ offered: false, rule: 'bySender["slack:U1"].deny "write_file"' });
    expect(offered(t, writeFile, bob).offered).toBe(true);
  });

  it("lets a conversation's deny win over a sender's allow in that conversation only", () => {
    const t = tools({ bySender: { "slack:U1": { allow: ["write_file"] } }, byConversation: { "slack:C1": { deny: ["write_file"] } } });
    expect(offered(t, writeFile, alice)).toEqual({ offered: false, rule: 'byConversation["slack:C1"].deny "write_file"' });
    expect(offered(t, writeFile, { ...alice, conversationId: "C2" }).offered).toBe(true);
  });

  it("lets a deny for a person inside a conversation win over that conversation's allow", () => {
    const t = tools({ byConversation: { "slack:C1": { allow: ["*"], bySender: { "slack:U1": { deny: ["read_file"] } } } } });
    expect(offered(t, readFile, alice)).toEqual({
      offered: false,
      rule: 'byConversation["slack:C1"].bySender["slack:U1"].deny "read_file"',
    });
    expect(offered(t, readFile, bob).offered).toBe(true);
  });

  it("applies a channel-wide sender deny and a catch-all sender deny", () => {
    const t = tools({ bySender: { "telegram:*": { deny: ["write_file"] }, "*": { deny: ["http_fetch"] } } });
    const tg: PolicySubject = { channel: "telegram", senderId: "42" };
    expect(offered(t, writeFile, tg).rule).toBe('bySender["telegram:*"].deny "write_file"');
    expect(offered(t, writeFile, alice).offered).toBe(true);
    expect(offered(t, { name: "http_fetch", risk: "read", owner: "builtin" }, alice).rule).toBe('bySender["*"].deny "http_fetch"');
  });
});

describe("precedence of per-sender and per-conversation rules", () => {
  it("gives one person more than everyone else", () => {
    const t = tools({ profile: "messaging", bySender: { "slack:U1": { profile: "standard" } } });
    expect(offered(t, readFile, alice)).toEqual({ offered: true, rule: 'bySender["slack:U1"].profile "standard"' });
    expect(offered(t, readFile, bob)).toEqual({ offered: false, rule: 'profile "messaging"' });
  });

  it("prefers an exact sender rule over the channel-wide and catch-all ones", () => {
    const t = tools({
      bySender: { "slack:U1": { allow: ["read_file"] }, "slack:*": { allow: ["current_time"] }, "*": { allow: ["write_file"] } },
    });
    expect(offered(t, readFile, alice).offered).toBe(true);
    expect(offered(t, readFile, bob)).toEqual({ offered: false, rule: 'bySender["slack:*"].allow (not listed)' });
    expect(offered(t, writeFile, { channel: "discord", senderId: "9" }).offered).toBe(true);
  });

  it("lets a conversation rule override a sender rule", () => {
    const t = tools({ bySender: { "slack:U1": { allow: ["read_file"] } }, byConversation: { "slack:C1": { allow: ["current_time"] } } });
    expect(offered(t, readFile, alice)).toEqual({ offered: false, rule: 'byConversation["slack:C1"].allow (not listed)' });
    expect(offered(t, readFile, { ...alice, conversationId: "C9" }).offered).toBe(true);
  });

  it("lets a person's rule inside a conversation override the conversation's rule", () => {
    const t = tools({
      byConversation: { "slack:C1": { profile: "messaging", bySender: { "slack:U1": { profile: "standard" } } } },
    });
    expect(offered(t, readFile, alice).rule).toBe('byConversation["slack:C1"].bySender["slack:U1"].profile "standard"');
    expect(offered(t, readFile, bob)).toEqual({ offered: false, rule: 'byConversation["slack:C1"].profile "messaging"' });
  });

  it("lifts a less specific allow list with allow: ['*']", () => {
    const t = tools({ allow: ["current_time"], bySender: { "slack:U1": { allow: ["*"] } } });
    expect(offered(t, writeFile, alice).offered).toBe(true);
    expect(offered(t, writeFile, bob).offered).toBe(false);
  });
});

describe("elevated execution", () => {
  it("offers shell on the local console by default but not in chat channels", () => {
    expect(offered(tools(), shell, local)).toEqual({ offered: true, rule: 'profile "standard" + tools.elevated.allowFrom "console:*"' });
    expect(offered(tools(), shell, alice)).toEqual({ offered: false, rule: "tools.elevated.allowFrom (sender not listed)" });
  });

  it("offers shell to a listed sender only", () => {
    const t = tools({ elevated: { allowFrom: ["slack:U1"] } });
    expect(offered(t, shell, alice).offered).toBe(true);
    expect(offered(t, shell, bob).offered).toBe(false);
  });

  it("offers shell to nobody when elevated execution is off", () => {
    const t = tools({ elevated: { enabled: false, allowFrom: ["*"] } });
    expect(offered(t, shell, local)).toEqual({ offered: false, rule: "tools.elevated.enabled is false" });
  });

  it("never lets elevation override a deny", () => {
    const t = tools({ deny: ["shell"], elevated: { allowFrom: ["*"] } });
    expect(offered(t, shell, local)).toEqual({ offered: false, rule: 'tools.deny "shell"' });
  });

  it("does not ask for elevation for tools that are not exec-class", () => {
    const t = tools({ elevated: { enabled: false } });
    expect(offered(t, writeFile, alice).offered).toBe(true);
  });
});

describe("autonomy and availability", () => {
  it("offers only read tools in readonly mode", () => {
    const readonly = approval({ autonomy: "readonly" });
    expect(offered(tools(), readFile, alice, readonly).offered).toBe(true);
    expect(offered(tools(), writeFile, alice, readonly)).toEqual({ offered: false, rule: 'autonomy "readonly" (write tool)' });
    expect(offered(tools(), shell, local, readonly)).toEqual({ offered: false, rule: 'autonomy "readonly" (exec tool)' });
  });
});

describe("approval requirement", () => {
  const need = (a: ReturnType<typeof approval>, tool: ToolDescriptor, remembered = false) =>
    approvalRequirement(a, tool, alice, remembered);

  it("runs read tools without asking when supervised", () => {
    expect(need(approval(), readFile)).toEqual({ requirement: "not-required", rule: 'autonomy "supervised" (read tool)' });
  });

  it("asks before write and exec tools when supervised", () => {
    expect(need(approval(), writeFile)).toEqual({ requirement: "prompt", rule: 'autonomy "supervised" (write tool)' });
    expect(need(approval(), shell).requirement).toBe("prompt");
  });

  it("approves by policy what autoApprove lists", () => {
    expect(need(approval({ autoApprove: ["write_file"] }), writeFile)).toEqual({
      requirement: "approved-by-policy",
      rule: 'approval.autoApprove "write_file"',
    });
  });

  it("approves by policy a tool someone answered always for", () => {
    expect(need(approval(), writeFile, true)).toEqual({ requirement: "approved-by-policy", rule: 'remembered "always"' });
  });

  it("approves everything by policy in full autonomy", () => {
    expect(need(approval({ autonomy: "full" }), shell)).toEqual({ requirement: "approved-by-policy", rule: 'autonomy "full"' });
  });

  it("lets alwaysAsk beat autoApprove, remembered always and full autonomy", () => {
    const a = approval({ autonomy: "full", alwaysAsk: ["mcp:github__*"], autoApprove: ["github__create_issue"] });
    expect(need(a, createIssue, true)).toEqual({ requirement: "prompt", rule: 'approval.alwaysAsk "mcp:github__*"' });
    const supervised = approval({ alwaysAsk: ["write_file"], autoApprove: ["write_file"] });
    expect(need(supervised, writeFile, true).requirement).toBe("prompt");
    expect(need(approval({ alwaysAsk: ["github__list_issues"] }), listIssues).requirement).toBe("prompt");
  });
});
