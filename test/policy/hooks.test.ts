import { describe, expect, it } from "vitest";
import { HookRegistry, registerConfigHooks, type ToolCallInfo } from "../../src/policy/hooks.ts";
import { HookConfigSchema } from "../../src/policy/schema.ts";

const call = (over: Partial<ToolCallInfo> = {}): ToolCallInfo => ({
  callId: "call-1",
  tool: "shell",
  owner: "builtin",
  params: { command: "ls" },
  sessionKey: "slack:C1:1.0",
  senderId: "U1",
  channel: "slack",
  ...over,
});

describe("before_tool_call hooks", () => {
  it("runs handlers by priority, higher first, ties in registration order", async () => {
    const hooks = new HookRegistry();
    const order: string[] = [];
    hooks.onBeforeToolCall("low", () => void order.push("low"), { priority: -1 });
    hooks.onBeforeToolCall("first-default", () => void order.push("first-default"));
    hooks.onBeforeToolCall("high", () => void order.push("high"), { priority: 10 });
    hooks.onBeforeToolCall("second-default", () => void order.push("second-default"));
    await hooks.runBefore(call());
    expect(order).toEqual(["high", "first-default", "second-default", "low"]);
  });

  it("passes the call through unchanged when no hook objects", async () => {
    const hooks = new HookRegistry();
    hooks.onBeforeToolCall("observer", () => undefined);
    expect(await hooks.runBefore(call())).toEqual({ params: { command: "ls" } });
  });

  it("keeps a block even when a later handler says block: false, and still runs every handler", async () => {
    const hooks = new HookRegistry();
    let lastRan = false;
    hooks.onBeforeToolCall("guard", () => ({ block: true, reason: "no shell on Fridays" }), { priority: 5 });
    hooks.onBeforeToolCall("lenient", () => ({ block: false }));
    hooks.onBeforeToolCall("last", () => void (lastRan = true), { priority: -5 });
    const outcome = await hooks.runBefore(call());
    expect(outcome.blocked).toEqual({ by: "guard", reason: "no shell on Fridays" });
    expect(lastRan).toBe(true);
  });

  it("names the first hook that blocked when several do", async () => {
    const hooks = new HookRegistry();
    hooks.onBeforeToolCall("first", () => ({ block: true, reason: "first reason" }), { priority: 1 });
    hooks.onBeforeToolCall("second", () => ({ block: true, reason: "second reason" }));
    hooks.onBeforeToolCall("third", () => {
      throw new Error("boom");
    });
    expect((await hooks.runBefore(call())).blocked).toEqual({ by: "first", reason: "first reason" });
  });

  it("uses the params of the last handler that rewrote them, and shows each handler the current ones", async () => {
    const hooks = new HookRegistry();
    const seen: unknown[] = [];
    hooks.onBeforeToolCall("a", (c) => ({ params: { ...c.params, command: "ls -l" } }), { priority: 2 });
    hooks.onBeforeToolCall("b", (c) => {
      seen.push(c.params);
      return { params: { ...c.params, command: "ls -la" } };
    }, { priority: 1 });
    const outcome = await hooks.runBefore(call());
    expect(seen).toEqual([{ command: "ls -l" }]);
    expect(outcome.params).toEqual({ command: "ls -la" });
  });

  it("does not let a handler change the params by mutating the object it was given", async () => {
    const hooks = new HookRegistry();
    hooks.onBeforeToolCall("sneaky", (c) => {
      c.params.command = "rm -rf /";
    });
    expect((await hooks.runBefore(call())).params).toEqual({ command: "ls" });
  });

  it("lets the first handler that requires approval win and freezes params for the handlers after it", async () => {
    const hooks = new HookRegistry();
    hooks.onBeforeToolCall("asker", (c) => ({ requireApproval: true, approvalReason: "touches prod", params: { ...c.params, cwd: "/srv" } }), { priority: 3 });
    hooks.onBeforeToolCall("second-asker", () => ({ requireApproval: true, approvalReason: "other" }), { priority: 2 });
    hooks.onBeforeToolCall("rewriter", () => ({ params: { command: "rm -rf /" } }), { priority: 1 });
    const outcome = await hooks.runBefore(call());
    expect(outcome.approvalRequired).toEqual({ by: "asker", reason: "touches prod" });
    expect(outcome.params).toEqual({ command: "ls", cwd: "/srv" });
    expect(outcome.blocked).toBeUndefined();
  });

  it("still lets a handler block after params were frozen for approval", async () => {
    const hooks = new HookRegistry();
    hooks.onBeforeToolCall("asker", () => ({ requireApproval: true }), { priority: 2 });
    hooks.onBeforeToolCall("guard", () => ({ block: true, reason: "denied by guard" }), { priority: 1 });
    const outcome = await hooks.runBefore(call());
    expect(outcome.approvalRequired).toEqual({ by: "asker" });
    expect(outcome.blocked).toEqual({ by: "guard", reason: "denied by guard" });
  });

  it("blocks the call when a handler throws, naming the hook and the error", async () => {
    const hooks = new HookRegistry();
    let laterRan = false;
    hooks.onBeforeToolCall("broken", async () => {
      throw new Error("database unreachable");
    });
    hooks.onBeforeToolCall("later", () => void (laterRan = true));
    const outcome = await hooks.runBefore(call());
    expect(outcome.blocked).toEqual({ by: "broken", reason: 'hook "broken" failed: database unreachable' });
    expect(laterRan).toBe(true);
  });

  it("ends each call with its own params: rewritten for the call a handler rewrote, as given for the others", async () => {
    const hooks = new HookRegistry();
    hooks.onBeforeToolCall("rewriter", (c) => (c.callId === "call-2" ? { params: { command: "pwd" } } : undefined));
    expect((await hooks.runBefore(call({ callId: "call-1" }))).params).toEqual({ command: "ls" });
    expect((await hooks.runBefore(call({ callId: "call-2" }))).params).toEqual({ command: "pwd" });
  });

  it("stops running a handler once it is removed", async () => {
    const hooks = new HookRegistry();
    const remove = hooks.onBeforeToolCall("guard", () => ({ block: true, reason: "no" }));
    remove();
    expect((await hooks.runBefore(call())).blocked).toBeUndefined();
  });

  it("keeps the order right when hooks come and go between calls", async () => {
    const hooks = new HookRegistry();
    const order: string[] = [];
    hooks.onBeforeToolCall("low", () => void order.push("low"), { priority: -1 });
    const removeMid = hooks.onBeforeToolCall("mid", () => void order.push("mid"));
    await hooks.runBefore(call());
    hooks.onBeforeToolCall("high", () => void order.push("high"), { priority: 1 });
    removeMid();
    await hooks.runBefore(call());
    expect(order).toEqual(["mid", "low", "high", "low"]);
  });

  it("runs a handler only for the calls it says it is for", async () => {
    const hooks = new HookRegistry();
    const seen: string[] = [];
    hooks.onBeforeToolCall("fetch-only", (c) => ({ block: true, reason: `no ${String(c.params.url)}` }), {
      appliesTo: (c) => c.tool === "http_fetch",
    });
    hooks.onBeforeToolCall("all", (c) => void seen.push(c.tool));
    expect((await hooks.runBefore(call())).blocked).toBeUndefined();
    const fetch = await hooks.runBefore(call({ tool: "http_fetch", params: { url: "https://example.com" } }));
    expect(fetch.blocked).toEqual({ by: "fetch-only", reason: "no https://example.com" });
    expect(seen).toEqual(["shell", "http_fetch"]);
  });

  it("blocks the call when a hook's own test of which calls it is for throws", async () => {
    const hooks = new HookRegistry();
    hooks.onBeforeToolCall("picky", () => undefined, {
      appliesTo: () => {
        throw new Error("no pattern");
      },
    });
    expect((await hooks.runBefore(call())).blocked).toEqual({ by: "picky", reason: 'hook "picky" failed: no pattern' });
  });
});

describe("after_tool_call hooks", () => {
  it("runs every handler with the result, even after one throws", async () => {
    const hooks = new HookRegistry();
    const seen: string[] = [];
    hooks.onAfterToolCall("broken", () => {
      throw new Error("boom");
    }, { priority: 1 });
    hooks.onAfterToolCall("audit", (c) => void seen.push(`${c.tool}:${c.result.output}:${c.ms}`));
    await expect(hooks.runAfter({ ...call(), result: { success: true, output: "a.txt" }, ms: 12 })).resolves.toBeUndefined();
    expect(seen).toEqual(["shell:a.txt:12"]);
  });
});

describe("config hooks", () => {
  const registry = (config: unknown) => {
    const hooks = new HookRegistry();
    registerConfigHooks(hooks, HookConfigSchema.parse(config));
    return hooks;
  };

  it("blocks matching tools whose arguments match the pattern, with the configured reason", async () => {
    const hooks = registry([{ type: "block", tools: ["shell"], match: "rm\\s+-rf", reason: "no recursive deletes" }]);
    expect((await hooks.runBefore(call({ params: { command: "rm -rf /tmp/x" } }))).blocked).toEqual({
      by: "config:0:block",
      reason: "no recursive deletes",
    });
    expect((await hooks.runBefore(call({ params: { command: "ls" } }))).blocked).toBeUndefined();
    expect((await hooks.runBefore(call({ tool: "read_file", params: { path: "rm -rf" } }))).blocked).toBeUndefined();
  });

  it("requires approval for matching MCP tools by server pattern", async () => {
    const hooks = registry([{ type: "require_approval", tools: ["mcp:github__*"], reason: "GitHub writes are reviewed" }]);
    const outcome = await hooks.runBefore(call({ tool: "github__create_issue", owner: "mcp:github", params: { title: "x" } }));
    expect(outcome.approvalRequired).toEqual({ by: "config:0:require_approval", reason: "GitHub writes are reviewed" });
    expect((await hooks.runBefore(call())).approvalRequired).toBeUndefined();
  });

  it("orders config hooks by their priority among code hooks", async () => {
    const hooks = registry([{ type: "require_approval", tools: ["*"], priority: 10 }]);
    hooks.onBeforeToolCall("rewriter", () => ({ params: { command: "pwd" } }));
    const outcome = await hooks.runBefore(call());
    expect(outcome.approvalRequired?.by).toBe("config:0:require_approval");
    expect(outcome.params).toEqual({ command: "ls" });
  });
});
