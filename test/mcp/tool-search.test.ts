import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AnyTool } from "../../src/tools/tool.ts";
import { createToolSearchTool, deferredToolsPrompt, rankTools } from "../../src/tools/tool-search.ts";
import { toolContext } from "./helpers.ts";

function mcpTool(name: string, description: string): AnyTool {
  return {
    name,
    description,
    parameters: z.looseObject({}),
    risk: "write",
    owner: `mcp:${name.split("__")[0]}`,
    execute: async () => ({ success: true, output: "" }),
  };
}

const catalog = [
  mcpTool("fs__read_text_file", "Read the complete contents of a file as text."),
  mcpTool("fs__write_file", "Create a new file or overwrite an existing file."),
  mcpTool("fs__list_directory", "List the files and directories in a path."),
  mcpTool("github__create_issue", "Open a new issue in a GitHub repository."),
  mcpTool("github__delete_repository", "Delete a repository for good."),
];

function searchTool(denied: string[] = []) {
  const activated: Array<{ names: string[]; sessionKey: string }> = [];
  const tool = createToolSearchTool({
    catalog: () => catalog,
    isAllowed: (t) => !denied.includes(t.name),
    activate: (names, sessionKey) => activated.push({ names, sessionKey }),
  });
  return { tool, activated };
}

describe("rankTools", () => {
  it("ranks name matches above description matches", () => {
    const ranked = rankTools(catalog, "file", 5).map((t) => t.name);
    expect(ranked.slice(0, 2).sort()).toEqual(["fs__read_text_file", "fs__write_file"]);
    expect(ranked).toContain("fs__list_directory");
    expect(ranked).not.toContain("github__create_issue");
  });

  it("puts the tool matching most keywords first and honours max", () => {
    expect(rankTools(catalog, "open github issue", 1).map((t) => t.name)).toEqual(["github__create_issue"]);
  });

  it("finds nothing for words no tool mentions, or only filler words", () => {
    expect(rankTools(catalog, "weather forecast", 5)).toEqual([]);
    expect(rankTools(catalog, "the a to", 5)).toEqual([]);
  });
});

describe("tool_search", () => {
  it("is a read-only built-in", () => {
    const { tool } = searchTool();
    expect(tool).toMatchObject({ name: "tool_search", risk: "read", owner: "builtin" });
  });

  it("activates the matches for the caller's session and lists them with descriptions", async () => {
    const { tool, activated } = searchTool();
    const result = await tool.execute({ query: "repository issue", max: 2 }, toolContext());
    expect(result.success).toBe(true);
    expect(result.output).toContain("now available");
    expect(result.output).toContain("- github__create_issue: Open a new issue in a GitHub repository.");
    expect(activated).toEqual([{ names: ["github__create_issue", "github__delete_repository"], sessionKey: "console:test" }]);
  });

  it("activates exactly the tools named with select:", async () => {
    const { tool, activated } = searchTool();
    const result = await tool.execute({ query: "select:fs__write_file, fs__list_directory" }, toolContext());
    expect(result.success).toBe(true);
    expect(activated[0].names).toEqual(["fs__write_file", "fs__list_directory"]);
  });

  it("never returns or activates a tool that policy denies", async () => {
    const { tool, activated } = searchTool(["github__delete_repository"]);
    const search = await tool.execute({ query: "delete repository" }, toolContext());
    expect(search.output).not.toContain("github__delete_repository");
    expect(activated.flatMap((a) => a.names)).not.toContain("github__delete_repository");
    const selected = await tool.execute({ query: "select:github__delete_repository" }, toolContext());
    expect(selected.success).toBe(false);
    expect(selected.error).toContain("Not available: github__delete_repository");
    expect(selected.error).not.toMatch(/activate: .*github__delete_repository/);
    expect(activated.flatMap((a) => a.names)).not.toContain("github__delete_repository");
  });

  it("activates the known names of a select: and says which were not found", async () => {
    const { tool, activated } = searchTool();
    const result = await tool.execute({ query: "select:fs__write_file,fs__format_disk" }, toolContext());
    expect(result.success).toBe(true);
    expect(result.output).toContain("Not available: fs__format_disk");
    expect(activated[0].names).toEqual(["fs__write_file"]);
  });

  it("says nothing matched and lists what can be activated", async () => {
    const { tool, activated } = searchTool();
    const result = await tool.execute({ query: "weather" }, toolContext());
    expect(result.output).toMatch(/^No tools match "weather"\. Tools you can activate: fs__list_directory, /);
    expect(activated).toEqual([]);
  });

  it("rejects a missing query through its parameters", () => {
    const { tool } = searchTool();
    expect(tool.parameters.safeParse({ query: "  " }).success).toBe(false);
    expect(tool.parameters.safeParse({ query: "file", max: 50 }).success).toBe(false);
  });
});

describe("deferredToolsPrompt", () => {
  it("lists the deferred tool names and how to activate them", () => {
    const prompt = deferredToolsPrompt(catalog.slice(0, 2));
    expect(prompt).toContain("fs__read_text_file, fs__write_file");
    expect(prompt).toContain("tool_search");
    expect(prompt).not.toContain("Read the complete contents");
  });

  it("is empty when nothing is deferred", () => {
    expect(deferredToolsPrompt([])).toBe("");
  });
});
