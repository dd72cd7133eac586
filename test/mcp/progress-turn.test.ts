/**
 * An MCP tool's progress reports in a whole turn: they reach the turn's events as the call's
 * progress text (which delivery posts like other progress lines), never as answer text.
 */
import { afterEach, describe, expect, it } from "vitest";
import { engineFixture, type EngineFixture } from "../engine/fixture.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { McpHub } from "../../src/tools/mcp/hub.ts";
import { FIXTURE_SERVER, mcpConfig } from "./helpers.ts";

let fx: EngineFixture | undefined;
let hub: McpHub | undefined;
afterEach(async () => {
  await fx?.close();
  await hub?.close();
  fx = hub = undefined;
});

describe("MCP progress in a turn", () => {
  it("shows the server's progress as the call's progress text", async () => {
    hub = new McpHub(mcpConfig({ servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnlyTools: ["progress"] } } }), silentLogger());
    await hub.start();
    fx = await engineFixture({ tools: hub.tools(), policy: { profile: "full" } });
    fx.emu.script({ toolCalls: [{ name: "fx__progress", arguments: '{"steps":2}' }] }, { text: "indexed" });
    const { outcome, turnEvents } = await fx.turn("index it");
    expect(outcome.text).toBe("indexed");
    // Typed loosely: the event kind is the engine's to add (see the report on issue 14).
    const progress = turnEvents.filter((e) => (e as { type: string }).type === "tool.progress");
    expect(progress[0]).toMatchObject({ tool: "fx__progress", text: "indexing (1/2)" });
  });
});
