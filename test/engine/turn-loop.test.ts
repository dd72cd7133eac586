import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { engineFixture, lastToolResult, probeTool, toolMessages, type EngineFixture } from "./fixture.ts";
import type { AnyTool } from "../../src/tools/tool.ts";

let fx: EngineFixture;
afterEach(async () => fx?.close());

describe("the turn loop", () => {
  it("runs a multi-step tool conversation and answers with the model's final text", async () => {
    fx = await engineFixture();
    fx.emu.script(
      { toolCalls: [{ name: "current_time", arguments: '{"timezone":"UTC"}' }] },
      { toolCalls: [{ name: "list_files", arguments: '{"path":"."}' }] },
      { text: "It is morning and the folder is empty." },
    );
    const { outcome, turnEvents } = await fx.turn("what time is it, and what files are there?");
    expect(outcome.status).toBe("done");
    expect(outcome.text).toBe("It is morning and the folder is empty.");
    expect(fx.emu.requests).toHaveLength(3);
    expect(lastToolResult(fx.emu, 1)).toMatch(/\d{4}-\d{2}-\d{2}T/);
    const lines = turnEvents.filter((e) => e.type === "tool.finish").map((e) => (e as { tool: string }).tool);
    expect(lines).toEqual(["current_time", "list_files"]);
    // History: user, assistant(call), tool, assistant(call), tool, assistant(text) — no orphaned call.
    expect(outcome.newMessages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
  });

  it("offers the tools the catalog has at each request: one that joins mid-turn is offered next, one that left is not run", async () => {
    const joining = probeTool("joining_probe");
    const leaving = probeTool("leaving_probe");
    const catalog: AnyTool[] = [];
    // Stands for an MCP server connecting and another one going away while the turn runs.
    const changer = probeTool("changer", { output: () => { catalog.push(joining.tool); catalog.splice(catalog.indexOf(leaving.tool), 1); return "changed"; } });
    fx = await engineFixture({ tools: [changer.tool, leaving.tool], policy: { profile: "full" } });
    const tools = fx.exec.catalog();
    catalog.push(...tools);
    fx.exec.catalog = () => [...catalog];
    fx.emu.script(
      { toolCalls: [{ name: "changer", arguments: "{}" }] },
      { toolCalls: [{ name: "joining_probe", arguments: '{"value":"x"}' }, { name: "leaving_probe", arguments: '{"value":"y"}' }] },
      { text: "done" },
    );
    const { outcome } = await fx.turn("change the tools");
    expect(outcome.status).toBe("done");
    const offered = (i: number) => ((fx.emu.requests[i]!.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(offered(0)).toContain("leaving_probe");
    expect(offered(0)).not.toContain("joining_probe");
    expect(offered(1)).toContain("joining_probe");
    expect(offered(1)).not.toContain("leaving_probe");
    expect(joining.calls).toEqual([{ value: "x" }]);
    expect(leaving.calls).toEqual([]);
    expect(toolMessages(fx.emu.requests[2]!.body).at(-1)!.content).toMatch(/leaving_probe/);
  });

  it("keeps the model's order of results when calls run in parallel", async () => {
    const slow = probeTool("slow_probe", { delayMs: 200 });
    const fast = probeTool("fast_probe", { delayMs: 10 });
    fx = await engineFixture({ tools: [slow.tool, fast.tool], knobs: { parallelTools: true }, policy: { profile: "full" } });
    fx.emu.script(
      { toolCalls: [{ id: "a", name: "slow_probe", arguments: '{"value":"1"}' }, { id: "b", name: "fast_probe", arguments: '{"value":"2"}' }] },
      { text: "done" },
    );
    const started = Date.now();
    const { turnEvents } = await fx.turn("go");
    const finishOrder = turnEvents.filter((e) => e.type === "tool.finish").map((e) => (e as { tool: string }).tool);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(toolMessages(fx.emu.requests[1]!.body).map((m) => m.tool_call_id)).toEqual(["a", "b"]);
    expect(toolMessages(fx.emu.requests[1]!.body).map((m) => m.content)).toEqual(["slow_probe:1", "fast_probe:2"]);
    expect(finishOrder).toEqual(["slow_probe", "fast_probe"]);
  });

  it("runs calls one after another when parallel dispatch is off", async () => {
    const order: string[] = [];
    const a = probeTool("probe_a", { delayMs: 100, output: () => (order.push("a"), "A") });
    const b = probeTool("probe_b", { delayMs: 10, output: () => (order.push("b"), "B") });
    fx = await engineFixture({ tools: [a.tool, b.tool], policy: { profile: "full" } });
    fx.emu.script({ toolCalls: [{ name: "probe_a", arguments: "{}" }, { name: "probe_b", arguments: "{}" }] }, { text: "ok" });
    await fx.turn("go");
    expect(order).toEqual(["a", "b"]);
    expect(toolMessages(fx.emu.requests[1]!.body).map((m) => m.content)).toEqual(["A", "B"]);
  });

  it("on cancel mid-batch keeps finished results and marks the rest interrupted", async () => {
    const first = probeTool("probe_first", { delayMs: 10 });
    const second = probeTool("probe_second", { delayMs: 5000 });
    const third = probeTool("probe_third");
    fx = await engineFixture({ tools: [first.tool, second.tool, third.tool], policy: { profile: "full" } });
    fx.emu.script({
      toolCalls: [
        { id: "c1", name: "probe_first", arguments: "{}" },
        { id: "c2", name: "probe_second", arguments: "{}" },
        { id: "c3", name: "probe_third", arguments: "{}" },
      ],
    });
    const controller = new AbortController();
    // Stopped while the second call runs, however slowly the machine got there.
    const watch = setInterval(() => second.calls.length > 0 && controller.abort(), 10);
    const { outcome } = await fx.turn("go", { signal: controller.signal }).finally(() => clearInterval(watch));
    expect(outcome.status).toBe("cancelled");
    const results = outcome.newMessages.filter((m) => m.role === "tool").map((m) => (m as { content: string }).content);
    expect(results[0]).toBe("probe_first:");
    expect(results[1]).toMatch(/interrupted while it ran/);
    expect(results[2]).toMatch(/interrupted, the turn was stopped before it ran/);
    expect(third.calls).toHaveLength(0);
  });

  it("bounds a huge result to maxToolResultChars, keeping head and tail and saying how much was cut", async () => {
    const big = probeTool("big_probe", { output: () => `HEAD${"x".repeat(50_000)}TAIL` });
    fx = await engineFixture({ tools: [big.tool], policy: { profile: "full" }, knobs: { maxToolResultChars: 1000 } });
    fx.emu.script({ toolCalls: [{ name: "big_probe", arguments: "{}" }] }, { text: "ok" });
    await fx.turn("go");
    const seen = lastToolResult(fx.emu, 1);
    expect(seen.length).toBeLessThanOrEqual(1000);
    expect(seen.startsWith("HEAD")).toBe(true);
    expect(seen.endsWith("TAIL")).toBe(true);
    expect(seen).toMatch(/49\d{3} characters cut/);
  });

  it("saves very large output to a file and references it by path", async () => {
    const big = probeTool("huge_probe", { output: () => "y".repeat(300_000) });
    fx = await engineFixture({ tools: [big.tool], policy: { profile: "full" }, knobs: { maxToolResultChars: 2000, spillToolResultChars: 100_000 } });
    fx.emu.script({ toolCalls: [{ name: "huge_probe", arguments: "{}" }] }, { text: "ok" });
    await fx.turn("go");
    const seen = lastToolResult(fx.emu, 1);
    const file = /saved to (\S+)\]/.exec(seen)?.[1];
    expect(file).toBeTruthy();
    expect(readFileSync(file!, "utf8")).toHaveLength(300_000);
  });

  it("reports empty output as (no output)", async () => {
    const quiet = probeTool("quiet_probe", { output: () => "" });
    fx = await engineFixture({ tools: [quiet.tool], policy: { profile: "full" } });
    fx.emu.script({ toolCalls: [{ name: "quiet_probe", arguments: "{}" }] }, { text: "ok" });
    await fx.turn("go");
    expect(lastToolResult(fx.emu, 1)).toBe("(no output)");
  });

  it("at the iteration cap asks once more without tools for a summary", async () => {
    fx = await engineFixture({ knobs: { maxIterations: 2 }, loop: { warnAt: 10, blockAt: 10, abortAt: 10 } });
    fx.emu.script(
      { toolCalls: [{ name: "current_time", arguments: "{}" }] },
      { toolCalls: [{ name: "current_time", arguments: '{"timezone":"Europe/Paris"}' }] },
      { text: "Summary: I checked the time twice." },
    );
    const { outcome, turnEvents } = await fx.turn("loop forever");
    expect(outcome.text).toBe("Summary: I checked the time twice.");
    const last = fx.emu.requests[2]!.body;
    expect(last.tools ?? []).toEqual([]);
    const msgs = last.messages as Array<{ role: string; content: string }>;
    expect(msgs[msgs.length - 1]!.content).toMatch(/limit of tool calls/);
    expect(turnEvents.some((e) => e.type === "notice" && /limit of 2 steps/.test(e.text))).toBe(true);
  });

  it("speaks the text protocol to models without native tools", async () => {
    fx = await engineFixture({ toolProtocol: "text" });
    fx.emu.script({ textToolCalls: [{ name: "current_time", arguments: { timezone: "UTC" } }] }, { text: "It is now." });
    const { outcome } = await fx.turn("time?");
    expect(outcome.text).toBe("It is now.");
    const first = fx.emu.requests[0]!.body;
    expect(first.tools).toBeUndefined();
    expect(JSON.stringify(first.messages)).toContain("<tool_call>");
    expect(JSON.stringify(fx.emu.requests[1]!.body.messages)).toMatch(/<tool_result[^>]*>[^<]*\d{4}-\d{2}/);
  });
});

describe("saved tool output", () => {
  it("is removed once older than a week", async () => {
    const { mkdtempSync, writeFileSync, utimesSync, existsSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    const { pruneSpilledOutput } = await import("../../src/engine/record.ts");
    const dir = mkdtempSync(path.join(tmpdir(), "gh-spill-"));
    writeFileSync(path.join(dir, "old.txt"), "x");
    writeFileSync(path.join(dir, "new.txt"), "y");
    const eightDaysAgo = (Date.now() - 8 * 24 * 3600_000) / 1000;
    utimesSync(path.join(dir, "old.txt"), eightDaysAgo, eightDaysAgo);
    expect(await pruneSpilledOutput(dir)).toBe(1);
    expect(existsSync(path.join(dir, "old.txt"))).toBe(false);
    expect(existsSync(path.join(dir, "new.txt"))).toBe(true);
  });
});
