import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { engineFixture, toolMessages, type EngineFixture } from "./fixture.ts";
import { resumeTurn } from "../../src/engine/turn.ts";
import { decodeTurnRecord, encodeTurnRecord } from "../../src/engine/turn-record.ts";
import type { StoredTurn } from "../../src/store/store.ts";
import type { TurnEvent } from "../../src/engine/types.ts";

/** A record written by the first version of parked turns: parked on write_file, after current_time was prepared. */
function goldenV1(): StoredTurn {
  const raw = JSON.parse(readFileSync(path.join(import.meta.dirname, "fixtures/parked-turn-v1.json"), "utf8"));
  return { ...raw, body: JSON.stringify(raw.body) };
}

let fx: EngineFixture;
afterEach(async () => fx?.close());

describe("parked turn records", () => {
  it("loads a record of schema version 1 and resumes it: the approved call runs and the model gets both results in order", async () => {
    fx = await engineFixture();
    const record = decodeTurnRecord(goldenV1());
    expect(record.batch?.waiting?.approvalId).toBe("fixtureApproval01");
    fx.emu.script({ text: "Noted the time in golden.txt." });
    const events: TurnEvent[] = [];
    const outcome = await resumeTurn(
      fx.exec,
      { turnId: record.turnId, traceId: record.traceId, sessionKey: record.sessionKey, envelope: record.envelope, history: [], signal: new AbortController().signal, emit: (e) => events.push(e) },
      record,
      { outcome: "approved", by: { id: "U1", name: "Ann" }, source: "backchannel" },
    );
    expect(outcome.status).toBe("done");
    expect(outcome.status !== "parked" && outcome.text).toBe("Noted the time in golden.txt.");
    expect(readFileSync(path.join(fx.exec.knobs.workspace, "golden.txt"), "utf8")).toBe("from the fixture");
    const results = toolMessages(fx.emu.requests[0]!.body);
    expect(results).toHaveLength(2);
    expect(results[0]!.content).toMatch(/\d{4}-\d{2}-\d{2}/);
    expect(results[1]!.content).toMatch(/golden\.txt/);
    expect(events.filter((e) => e.type === "tool.finish").map((e) => e.type === "tool.finish" && e.tool)).toEqual(["current_time", "write_file"]);
    expect(await fx.store.getTurn(record.turnId)).toBeUndefined();
  });

  it("says a denial came from a person when a parked turn resumes with it, and runs nothing", async () => {
    fx = await engineFixture();
    const record = decodeTurnRecord(goldenV1());
    fx.emu.script({ text: "I did not write it." });
    const state = { turnId: record.turnId, traceId: record.traceId, sessionKey: record.sessionKey, envelope: record.envelope, history: [], signal: new AbortController().signal, emit: () => {} };
    await resumeTurn(fx.exec, state, record, { outcome: "denied", by: { id: "U9", name: "Boss" }, source: "backchannel" });
    expect(toolMessages(fx.emu.requests[0]!.body)[1]!.content).toBe("write_file was not run: denied by Boss (U9).");
    const audit = await fx.store.listAudit({ kind: "approval.decided" });
    expect(audit.at(-1)).toMatchObject({ tool: "write_file", actorId: "U9", outcome: "denied", source: "backchannel" });
  });

  it("refuses a record from a newer Gatehouse, and a damaged one, with a clear error", () => {
    const newer = { ...goldenV1(), version: 99 };
    expect(() => decodeTurnRecord(newer)).toThrow(/newer Gatehouse \(record version 99/);
    const damaged = { ...goldenV1(), body: JSON.stringify({ version: 1, turnId: "x" }) };
    expect(() => decodeTurnRecord(damaged)).toThrow(/damaged record/);
  });

  it("writes back what it reads", () => {
    const record = decodeTurnRecord(goldenV1());
    expect(JSON.parse(encodeTurnRecord(record).body)).toEqual(JSON.parse(goldenV1().body));
  });
});
