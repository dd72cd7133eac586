import { describe, expect, it } from "vitest";
import { McpActivation } from "../../src/tools/mcp/activation.ts";

describe("MCP activation per session", () => {
  it("keeps tools active in a session, and only there", () => {
    const activation = new McpActivation();
    activation.activate("s1", ["mcp__files__read"]);
    expect([...activation.active("s1")]).toEqual(["mcp__files__read"]);
    expect(activation.active("s2").size).toBe(0);
  });

  it("holds no more sessions in memory than its bound after 10,000 sessions", () => {
    const activation = new McpActivation({ maxSessions: 500 });
    for (let i = 0; i < 10_000; i++) activation.activate(`session-${i}`, ["mcp__files__read"]);
    expect(activation.size).toBe(500);
    expect(activation.active("session-9999").has("mcp__files__read")).toBe(true);
  });

  it("brings a forgotten session's tools back from where they are kept", async () => {
    const stored = new Map([["old", ["mcp__files__read", "mcp__files__write"]]]);
    const activation = new McpActivation({ maxSessions: 2, load: async (key) => stored.get(key) });
    expect(activation.active("old").size).toBe(0);
    await activation.restore("old");
    expect([...activation.active("old")].sort()).toEqual(["mcp__files__read", "mcp__files__write"]);
  });

  it("merges what was stored with what a forgotten session activated again before it was restored", async () => {
    const stored = new Map([["s", ["mcp__a"]]]);
    let loads = 0;
    const activation = new McpActivation({
      load: async (key) => {
        loads++;
        return stored.get(key);
      },
    });
    activation.activate("s", ["mcp__b"]);
    await activation.restore("s");
    await activation.restore("s");
    expect([...activation.active("s")].sort()).toEqual(["mcp__a", "mcp__b"]);
    expect(loads).toBe(1);
  });

  it("forgets a session that is reset", () => {
    const activation = new McpActivation();
    activation.activate("s", ["mcp__a"]);
    activation.forget("s");
    expect(activation.active("s").size).toBe(0);
  });
});
