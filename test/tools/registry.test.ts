import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolRegistry, toolSpecOf, validateArgs } from "../../src/tools/registry.ts";
import type { AnyTool } from "../../src/tools/tool.ts";
import { builtinTools } from "../../src/tools/builtin/index.ts";
import { readFileTool } from "../../src/tools/builtin/read-file.ts";

function fakeTool(name: string, owner = "builtin"): AnyTool {
  return {
    name,
    description: `${name} tool`,
    parameters: z.object({ q: z.string() }),
    risk: "read",
    owner,
    execute: async () => ({ success: true, output: "ok" }),
  };
}

describe("ToolRegistry", () => {
  it("finds registered tools by name and lists them in order", () => {
    const registry = new ToolRegistry([fakeTool("alpha"), fakeTool("beta")]);
    expect(registry.get("beta")?.name).toBe("beta");
    expect(registry.get("gamma")).toBeUndefined();
    expect(registry.names).toEqual(["alpha", "beta"]);
    expect(registry.list().map((t) => t.name)).toEqual(["alpha", "beta"]);
  });

  it("refuses a second tool with a taken name and names the owner of the first", () => {
    const registry = new ToolRegistry([fakeTool("search")]);
    expect(() => registry.register(fakeTool("search", "mcp:web"))).toThrow(/"search" is already registered \(owner builtin\)/);
  });

  it("refuses a name the model API could not call", () => {
    expect(() => new ToolRegistry([fakeTool("read file")])).toThrow(/not allowed/);
  });

  it("holds every built-in tool without a clash", () => {
    const registry = new ToolRegistry(builtinTools({ workspace: "/tmp/unused" }));
    expect(registry.names.sort()).toEqual(["current_time", "http_fetch", "list_files", "read_file", "shell", "write_file"]);
  });
});

describe("toolSpecOf", () => {
  it("derives a JSON schema from the zod parameters without the $schema key", () => {
    const spec = toolSpecOf(readFileTool());
    expect(spec.name).toBe("read_file");
    expect(spec.parameters).not.toHaveProperty("$schema");
    expect(spec.parameters).toMatchObject({
      type: "object",
      properties: { path: { type: "string" }, startLine: { type: "integer", minimum: 1 } },
      required: ["path"],
    });
  });

  it("offers fields with a default as optional", () => {
    const spec = toolSpecOf({ ...fakeTool("t"), parameters: z.object({ path: z.string().default(".") }) });
    expect(spec.parameters.required ?? []).not.toContain("path");
  });

  it("offers a tool's own JSON schema as given, minus $schema", () => {
    const jsonSchema = { $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { x: { type: "number" } } };
    const spec = toolSpecOf({ ...fakeTool("mcp_tool", "mcp:demo"), jsonSchema });
    expect(spec.parameters).toEqual({ type: "object", properties: { x: { type: "number" } } });
    expect(jsonSchema).toHaveProperty("$schema");
  });
});

describe("validateArgs", () => {
  const tool = readFileTool();

  it("returns the parsed value for good arguments", () => {
    expect(validateArgs(tool, { path: "a.txt", startLine: 2 })).toEqual({ ok: true, value: { path: "a.txt", startLine: 2 } });
  });

  it("names a missing required field and its type", () => {
    const result = validateArgs(tool, {});
    expect(result).toEqual({ ok: false, error: 'invalid arguments for read_file: "path" is required (expected string)' });
  });

  it("names a field of the wrong type and what it got", () => {
    const result = validateArgs(tool, { path: 42 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/"path": expected string, received number/);
  });

  it("names every bad field, including a broken range", () => {
    const result = validateArgs(tool, { path: "a", startLine: 0, endLine: "x" });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(/"startLine": .*>=1/);
      expect(result.error).toMatch(/"endLine": expected number/);
    }
  });

  it("names unknown fields when the tool is strict", () => {
    const strict = { name: "strict", parameters: z.object({ a: z.string() }).strict() };
    const result = validateArgs(strict, { a: "x", extra: 1 });
    expect(result).toEqual({ ok: false, error: 'invalid arguments for strict: arguments: unknown field "extra"' });
  });

  it("says so when the arguments are not an object", () => {
    const result = validateArgs(tool, "a.txt");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/arguments: expected object, received string/);
  });
});
