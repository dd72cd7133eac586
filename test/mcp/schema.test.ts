import { describe, expect, it } from "vitest";
import { McpConfigSchema } from "../../src/tools/mcp/schema.ts";

describe("the mcp config section", () => {
  it("fills in defaults for an empty section and for each server", () => {
    const config = McpConfigSchema.parse({ servers: { fs: { command: "npx" }, docs: { url: "https://mcp.example.com/mcp" } } });
    expect(config.deferred).toBe(false);
    expect(config.filterGroups).toEqual([]);
    expect(config.servers.fs).toEqual({ command: "npx", args: [], timeoutMs: 30_000, maxCallMs: 600_000, toolRisk: {}, readOnly: false, readOnlyTools: [], lazy: false });
    expect(config.servers.docs).toMatchObject({ url: "https://mcp.example.com/mcp", timeoutMs: 30_000 });
    expect(McpConfigSchema.parse({})).toEqual({ servers: {}, deferred: false, filterGroups: [] });
  });

  it("takes a risk for a whole server and for single tools, and refuses an unknown one", () => {
    const config = McpConfigSchema.parse({ servers: { sh: { command: "mcp-shell", risk: "exec", toolRisk: { list: "read" } } } });
    expect(config.servers.sh).toMatchObject({ risk: "exec", toolRisk: { list: "read" } });
    expect(McpConfigSchema.safeParse({ servers: { sh: { command: "mcp-shell", risk: "dangerous" } } }).success).toBe(false);
  });

  it("rejects a server with neither command nor url, naming the server", () => {
    const result = McpConfigSchema.safeParse({ servers: { broken: { args: ["x"] } } });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].path).toEqual(["servers", "broken"]);
  });

  it("rejects a server name that would break the <server>__<tool> naming", () => {
    expect(McpConfigSchema.safeParse({ servers: { "git__hub": { command: "x" } } }).success).toBe(false);
    expect(McpConfigSchema.safeParse({ servers: { "my server": { command: "x" } } }).success).toBe(false);
    expect(McpConfigSchema.safeParse({ servers: { "my-server_2": { command: "x" } } }).success).toBe(true);
  });

  it("rejects a dynamic filter group without keywords", () => {
    const result = McpConfigSchema.safeParse({ filterGroups: [{ mode: "dynamic", tools: ["github__*"] }] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].message).toBe("a dynamic filter group needs at least one keyword");
  });

  it("rejects a url that is not http(s)", () => {
    expect(McpConfigSchema.safeParse({ servers: { a: { url: "ftp://example.com" } } }).success).toBe(false);
  });
});
