import { describe, expect, it } from "vitest";
import { annotatedRisk, mcpToolRisk } from "../../src/tools/mcp/risk.ts";
import { McpServerSchema } from "../../src/tools/mcp/schema.ts";
import { approvalRequirement } from "../../src/policy/tool-policy.ts";
import { ApprovalConfigSchema } from "../../src/policy/schema.ts";

const server = (extra: Record<string, unknown> = {}) => McpServerSchema.parse({ command: "mcp-server", ...extra });
const subject = { channel: "slack", senderId: "U1" };

describe("MCP tool risk", () => {
  it("lets a read-only tool of a closed world run, and nothing else", () => {
    expect(annotatedRisk({ readOnlyHint: true, openWorldHint: false })).toBe("read");
    expect(annotatedRisk({ readOnlyHint: true })).toBe("write");
    expect(annotatedRisk({ readOnlyHint: false, destructiveHint: true, openWorldHint: false })).toBe("write");
    expect(annotatedRisk(undefined)).toBe("write");
  });

  it("asks a person before a tool annotated destructive runs, under the default approval settings", () => {
    const risk = mcpToolRisk(server(), "drop_table", "db__drop_table", { readOnlyHint: false, destructiveHint: true, openWorldHint: false });
    const decision = approvalRequirement(ApprovalConfigSchema.parse({}), { name: "db__drop_table", risk, owner: "mcp:db" }, subject, false);
    expect(decision.requirement).toBe("prompt");
  });

  it("asks before an open-world tool runs, even one that only reads", () => {
    const risk = mcpToolRisk(server(), "search_web", "web__search_web", { readOnlyHint: true, openWorldHint: true });
    expect(approvalRequirement(ApprovalConfigSchema.parse({}), { name: "web__search_web", risk, owner: "mcp:web" }, subject, false).requirement).toBe("prompt");
  });

  it("takes the config over the annotations: per tool first, then the server", () => {
    const readOnly = { readOnlyHint: true, openWorldHint: false };
    expect(mcpToolRisk(server({ risk: "exec" }), "ls", "sh__ls", readOnly)).toBe("exec");
    expect(mcpToolRisk(server({ risk: "exec", toolRisk: { sh__ls: "read" } }), "ls", "sh__ls", readOnly)).toBe("read");
    expect(mcpToolRisk(server({ readOnly: true }), "rm", "sh__rm", { destructiveHint: true })).toBe("read");
    expect(mcpToolRisk(server({ readOnlyTools: ["cat"] }), "cat", "sh__cat", undefined)).toBe("read");
  });
});
