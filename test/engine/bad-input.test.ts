import { afterEach, describe, expect, it } from "vitest";
import { engineFixture, lastToolResult, probeTool, type EngineFixture } from "./fixture.ts";

let fx: EngineFixture;
afterEach(async () => fx?.close());

describe("bad input from the model or the endpoint", () => {
  it("turns malformed tool arguments into an error result the model can act on", async () => {
    fx = await engineFixture();
    fx.emu.script({ toolCalls: [{ name: "current_time", arguments: '{"timezone": "UTC"' }] }, { text: "sorry" });
    const { outcome } = await fx.turn("time?");
    expect(outcome.status).toBe("done");
    expect(lastToolResult(fx.emu, 1)).toMatch(/not valid JSON/);
  });

  it("answers an unknown tool with the list of tools that exist", async () => {
    fx = await engineFixture();
    fx.emu.script({ toolCalls: [{ name: "launch_rockets", arguments: "{}" }] }, { text: "ok" });
    await fx.turn("go");
    expect(lastToolResult(fx.emu, 1)).toMatch(/unknown tool "launch_rockets".*Available tools: .*current_time/);
  });

  it("reports arguments that do not fit the tool's schema", async () => {
    fx = await engineFixture();
    fx.emu.script({ toolCalls: [{ name: "read_file", arguments: '{"path": 42}' }] }, { text: "ok" });
    await fx.turn("go");
    expect(lastToolResult(fx.emu, 1)).toMatch(/invalid arguments.*path/);
  });

  it("turns a tool that throws into a failed result and keeps going", async () => {
    const boom = probeTool("boom_probe", { throws: "disk on fire" });
    fx = await engineFixture({ tools: [boom.tool], policy: { profile: "full" } });
    fx.emu.script({ toolCalls: [{ name: "boom_probe", arguments: "{}" }] }, { text: "The tool failed." });
    const { outcome, turnEvents } = await fx.turn("go");
    expect(outcome.text).toBe("The tool failed.");
    expect(lastToolResult(fx.emu, 1)).toMatch(/Error: boom_probe failed: disk on fire/);
    expect(turnEvents.find((e) => e.type === "tool.finish")).toMatchObject({ success: false });
  });

  it("says so when the model returns nothing", async () => {
    fx = await engineFixture();
    fx.emu.script({ empty: true });
    const { outcome } = await fx.turn("hello");
    expect(outcome.status).toBe("done");
    expect(outcome.text).toMatch(/empty answer/);
  });

  it("fails the turn cleanly on a garbage response, keeping the history consistent", async () => {
    fx = await engineFixture();
    fx.emu.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { garbage: true });
    const { outcome } = await fx.turn("hello");
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toBeTruthy();
    const roles = outcome.newMessages.map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "tool", "assistant"]);
    // The next turn's request is accepted by the endpoint: no orphaned tool call in history.
    fx.emu.script({ text: "fine now" });
    const next = await fx.turn("again");
    expect(next.outcome.text).toBe("fine now");
  });

  it("fails the turn with a clear message when the endpoint is down", async () => {
    fx = await engineFixture();
    await fx.emu.close();
    const { outcome } = await fx.turn("hello");
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toMatch(/cannot reach the model endpoint/i);
  });

  it("fails the turn with a timeout message when the endpoint hangs", async () => {
    fx = await engineFixture({ timeoutMs: 300 });
    fx.emu.script({ hang: true });
    const { outcome } = await fx.turn("hello");
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toMatch(/did not answer|timed out/i);
  });
});
