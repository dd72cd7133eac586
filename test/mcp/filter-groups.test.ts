import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AnyTool } from "../../src/tools/tool.ts";
import { visibleMcpTools } from "../../src/tools/mcp/filter-groups.ts";
import { mcpConfig } from "./helpers.ts";

function tool(name: string, owner: string): AnyTool {
  return { name, description: name, parameters: z.looseObject({}), risk: "read", owner, execute: async () => ({ success: true, output: "" }) };
}

const tools = [
  tool("fs__read_text_file", "mcp:fs"),
  tool("fs__write_file", "mcp:fs"),
  tool("github__create_issue", "mcp:github"),
  tool("github__list_pulls", "mcp:github"),
  tool("shell", "builtin"),
];

function groups(input: unknown[]) {
  return mcpConfig({ filterGroups: input }).filterGroups;
}

describe("visibleMcpTools", () => {
  it("shows every MCP tool, and no built-in, when no group is configured", () => {
    expect([...visibleMcpTools(tools, [], "hi")].sort()).toEqual(["fs__read_text_file", "fs__write_file", "github__create_issue", "github__list_pulls"]);
  });

  it("always shows an always group and hides MCP tools no group matches", () => {
    const visible = visibleMcpTools(tools, groups([{ mode: "always", tools: ["fs__read_*"] }]), "hello");
    expect([...visible]).toEqual(["fs__read_text_file"]);
  });

  it("shows a dynamic group only when the message contains one of its keywords", () => {
    const config = groups([
      { mode: "always", tools: ["mcp:fs__*"] },
      { mode: "dynamic", tools: ["github__*"], keywords: ["GitHub", "pull request"] },
    ]);
    expect(visibleMcpTools(tools, config, "summarise the notes").has("github__create_issue")).toBe(false);
    expect(visibleMcpTools(tools, config, "open a github issue").has("github__create_issue")).toBe(true);
    expect(visibleMcpTools(tools, config, "review my Pull Request please").has("github__list_pulls")).toBe(true);
    expect(visibleMcpTools(tools, config, "summarise the notes").has("fs__write_file")).toBe(true);
  });

  it("matches keywords as whole words", () => {
    const config = groups([{ mode: "dynamic", tools: ["github__*"], keywords: ["git"] }]);
    expect(visibleMcpTools(tools, config, "the digital plan").size).toBe(0);
    expect(visibleMcpTools(tools, config, "check git, please").size).toBe(2);
  });

  it("treats * as a wildcard and everything else literally", () => {
    const config = groups([{ mode: "always", tools: ["*__create_issue", "fs.write_file"] }]);
    expect([...visibleMcpTools(tools, config, "")]).toEqual(["github__create_issue"]);
  });
});
