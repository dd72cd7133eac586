import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AnyTool } from "../../src/tools/tool.ts";
import { McpActivation } from "../../src/tools/mcp/activation.ts";
import { mcpTurnTools } from "../../src/tools/mcp/turn-tools.ts";
import { mcpConfig, toolContext } from "./helpers.ts";

function tool(name: string, description: string): AnyTool {
  return { name, description, parameters: z.looseObject({}), risk: "write", owner: `mcp:${name.split("__")[0]}`, execute: async () => ({ success: true, output: "" }) };
}

const tools = [
  tool("fs__read_text_file", "Read a file as text."),
  tool("fs__write_file", "Write a file."),
  tool("github__create_issue", "Open an issue."),
];

describe("MCP tools of a turn", () => {
  it("offers every visible, allowed MCP tool when activation is not deferred", () => {
    const turn = mcpTurnTools({
      tools,
      config: mcpConfig({}),
      activation: new McpActivation(),
      sessionKey: "slack:C1:1.0",
      messageText: "hi",
      isAllowed: (t) => t.name !== "fs__write_file",
    });
    expect(turn.offered().map((t) => t.name)).toEqual(["fs__read_text_file", "github__create_issue"]);
    expect(turn.prompt).toBe("");
  });

  it("offers only tool_search and names until tools are activated, then the activated tools from the next request", async () => {
    const activation = new McpActivation();
    const turn = mcpTurnTools({
      tools,
      config: mcpConfig({ deferred: true }),
      activation,
      sessionKey: "console:test",
      messageText: "read my notes",
      isAllowed: (t) => t.name !== "github__create_issue",
    });
    expect(turn.offered().map((t) => t.name)).toEqual(["tool_search"]);
    expect(turn.prompt).toContain("fs__read_text_file, fs__write_file");
    expect(turn.prompt).not.toContain("github__create_issue");
    expect(turn.mayCall("fs__read_text_file")).toBe(false);
    expect(turn.refusal("fs__read_text_file")).toContain('select:fs__read_text_file');

    const search = turn.offered()[0];
    await search.execute({ query: "read file" }, toolContext());
    expect(turn.offered().map((t) => t.name)).toContain("fs__read_text_file");
    expect(turn.mayCall("fs__read_text_file")).toBe(true);

    await search.execute({ query: "select:github__create_issue" }, toolContext());
    expect(turn.offered().map((t) => t.name)).not.toContain("github__create_issue");
    expect(activation.active("console:test").has("github__create_issue")).toBe(false);
  });

  it("keeps activated tools for later turns of the same session only", async () => {
    const activation = new McpActivation();
    const input = { tools, config: mcpConfig({ deferred: true }), activation, messageText: "", isAllowed: () => true };
    const first = mcpTurnTools({ ...input, sessionKey: "console:test" });
    await first.offered()[0].execute({ query: "select:fs__write_file" }, toolContext());
    const later = mcpTurnTools({ ...input, sessionKey: "console:test" });
    expect(later.offered().map((t) => t.name)).toEqual(["tool_search", "fs__write_file"]);
    const elsewhere = mcpTurnTools({ ...input, sessionKey: "discord:42" });
    expect(elsewhere.offered().map((t) => t.name)).toEqual(["tool_search"]);
  });

  it("refuses an MCP tool that no active filter group matches", () => {
    const turn = mcpTurnTools({
      tools,
      config: mcpConfig({ filterGroups: [{ mode: "dynamic", tools: ["github__*"], keywords: ["issue"] }] }),
      activation: new McpActivation(),
      sessionKey: "console:test",
      messageText: "read my notes",
      isAllowed: () => true,
    });
    expect(turn.offered()).toEqual([]);
    expect(turn.mayCall("fs__read_text_file")).toBe(false);
    expect(turn.refusal("fs__read_text_file")).toBe("fs__read_text_file is not available for this message");
  });
});
