/**
 * Checkpoints around calls that may simply run again: a turn does not save its record before or
 * after a call of a replayable tool (a read of local state), so a crash replays it; any other call
 * is marked running in the store before it runs, so a crash reports it interrupted instead.
 */
import { afterEach, describe, expect, it } from "vitest";
import { decodeTurnRecord } from "../../src/engine/turn-record.ts";
import { heldTool } from "../support/scenario.ts";
import { waitUntil } from "../support/wait.ts";
import { engineFixture, type EngineFixture } from "./fixture.ts";

let fx: EngineFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe("checkpoints and replayable calls", () => {
  it("keeps no record while a replayable call runs, and none after the turn", async () => {
    const held = heldTool("peek");
    fx = await engineFixture({ tools: [{ ...held.tool, replayable: true }], policy: { profile: "full" } });
    fx.emu.script({ toolCalls: [{ name: "peek", arguments: "{}" }] }, { toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "done" });
    const turn = fx.turn("peek at it");
    await held.started();
    expect(await fx.store.listTurns()).toEqual([]);
    held.release();
    expect((await turn).outcome.text).toBe("done");
    expect(await fx.store.listTurns()).toEqual([]);
  });

  it("marks any other call running in the store before it runs, with the replayable results before it", async () => {
    const held = heldTool("deploy");
    fx = await engineFixture({ tools: [held.tool], policy: { profile: "full" } });
    fx.emu.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { toolCalls: [{ name: "deploy", arguments: "{}" }] }, { text: "done" });
    const turn = fx.turn("deploy it");
    await held.started();
    const stored = await waitUntil(async () => {
      const turns = await fx!.store.listTurns();
      expect(turns).toHaveLength(1);
      return turns[0]!;
    });
    const record = decodeTurnRecord(stored);
    expect(record.batch?.dispatch?.running).toEqual([0]);
    expect(record.newMessages.some((m) => m.role === "tool")).toBe(true);
    held.release();
    await turn;
    expect(await fx.store.listTurns()).toEqual([]);
  });
});
