/**
 * `gatehouse approvals list | export | verify` on the log of a scripted session: turns run through
 * the real engine against the OpenAI emulator with a real SQLite store, every kind of decision made
 * once, then the CLI run as a child process on that data folder, as an operator would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { engineFixture, probeTool, type EngineFixture } from "../engine/fixture.ts";
import { createNonInteractiveApprovals } from "../../src/approval/non-interactive.ts";
import type { ApprovalManager } from "../../src/approval/types.ts";
import { runCli } from "./cli-run.ts";

const root = mkdtempSync(path.join(tmpdir(), "gh-approvals-cli-"));
const sessionDir = path.join(root, "session");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const env = (dir = sessionDir) => ({ GATEHOUSE_DATA_DIR: path.join(dir, "data"), OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
const approvals = (args: string[], dir?: string) => runCli(["approvals", ...args], env(dir));
const writeCall = (file: string) => ({ name: "write_file", arguments: JSON.stringify({ path: file, content: "hi, there" }) });
const timesOut: ApprovalManager = { kind: "console", request: async () => ({ outcome: "timeout", source: "timeout" }) };

/** A copy of the session's data folder, to damage without touching the original. */
function copyOfSession(name: string): string {
  const dir = path.join(root, name);
  cpSync(sessionDir, dir, { recursive: true });
  return dir;
}

function database(dir: string): DatabaseSync {
  return new DatabaseSync(path.join(dir, "data", "gatehouse.db"));
}

let fx: EngineFixture | undefined;

beforeAll(async () => {
  const stamp = probeTool("stamp", { risk: "write" });
  fx = await engineFixture({ dir: sessionDir, tools: [stamp.tool], policy: { profile: "full" }, approval: { autoApprove: ["stamp"] } });
  const turn = async (call: { name: string; arguments: string }, manager: ApprovalManager = fx!.approvals) => {
    fx!.exec.approvals = manager;
    fx!.emu.script({ toolCalls: [call] }, { text: "ok" });
    await fx!.turn(`please ${call.name}`);
  };
  fx.approvals.answers = ["approved", "denied", "always"];
  await turn(writeCall("a.txt"));
  await turn(writeCall("b.txt"));
  await turn(writeCall("c.txt"), timesOut);
  await turn(writeCall("d.txt"), createNonInteractiveApprovals());
  await turn(writeCall("e.txt"));
  // Remembered "Always" from the turn before: it runs without asking.
  await turn(writeCall("f.txt"));
  await turn({ name: "stamp", arguments: '{"value":"x"}' });
  await fx.close();
  fx = undefined;
}, 60_000);
afterAll(async () => fx?.close());

describe("gatehouse approvals list and export", () => {
  it("lists every request and decision of the session, with who asked, what, who decided and the source", async () => {
    const { code, stdout } = await approvals(["list", "--json"]);
    expect(code).toBe(0);
    const entries = stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const decisions = entries.filter((e) => e.kind === "approval.decided").map((e) => [e.tool, e.source, e.outcome, e.decidedById ?? null]);
    expect(decisions).toEqual([
      ["write_file", "console", "approved", "U-boss"],
      ["write_file", "console", "denied", "U-boss"],
      ["write_file", "timeout", "timeout", null],
      ["write_file", "non-interactive", "unavailable", null],
      ["write_file", "console", "always", "U-boss"],
      ["write_file", "always", "approved", null],
      ["stamp", "policy", "approved", null],
    ]);
    expect(entries.filter((e) => e.kind === "approval.requested")).toHaveLength(5);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    for (const e of entries) {
      expect(e).toMatchObject({ requesterId: "U1", requesterName: "Ann", sessionKey: "console:c1", argsHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    }
    expect(entries.find((e) => e.outcome === "denied")).toMatchObject({ argsSummary: expect.stringContaining('"path":"b.txt"'), decidedByName: "Boss" });
    const decided = entries.filter((e) => e.kind === "approval.decided");
    expect(decided.find((e) => e.source === "non-interactive")).toMatchObject({ reason: "this channel cannot show approval buttons" });
    expect(decided.find((e) => e.source === "policy")).toMatchObject({ reason: 'approval.autoApprove "stamp"' });
    expect(decided.find((e) => e.source === "always")).toMatchObject({ reason: 'remembered "always"' });
  });

  it("shows the same log as a table, one line per entry, naming each decision's source", async () => {
    const { code, stdout } = await approvals(["list"]);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^#\s+TIME \(UTC\)\s+EVENT\s+TOOL\s+ASKED BY\s+DECIDED BY\s+SOURCE/);
    expect(lines).toHaveLength(13);
    const sources = lines.slice(1).filter((l) => !/ requested /.test(l)).map((l) => l.split(/\s{2,}/)[6]);
    expect(sources).toEqual(["person", "person", "timeout", "non-interactive", "person", "always", "policy"]);
    expect(lines.find((l) => / denied /.test(l))).toMatch(/write_file\s+Ann \(U1\)\s+Boss \(U-boss\)\s+person\s+\{"path":"b\.txt"/);
  });

  it("filters by tool, by person and by age", async () => {
    const rows = async (args: string[]) => (await approvals(["list", "--json", ...args])).stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect((await rows(["--tool", "stamp"])).map((e) => e.source)).toEqual(["policy"]);
    expect((await rows(["--by", "u-boss"])).map((e) => e.outcome)).toEqual(["approved", "denied", "always"]);
    expect(await rows(["--since", "30m"])).toHaveLength(12);
    const lastTwo = await rows(["--since", "2000-01-01", "--tool", "write_*", "--limit", "2"]);
    expect(lastTwo.map((e) => [e.source, e.outcome])).toEqual([["console", "always"], ["always", "approved"]]);
    const bad = await approvals(["list", "--since", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since "soon" is neither a duration/);
  });

  it("exports every entry as JSON lines and as quoted CSV", async () => {
    const listed = (await approvals(["list", "--json"])).stdout;
    const jsonl = await approvals(["export", "--format", "jsonl"]);
    expect(jsonl.code).toBe(0);
    expect(jsonl.stdout).toBe(listed);
    const csv = await approvals(["export", "--format", "csv"]);
    expect(csv.code).toBe(0);
    const lines = csv.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^seq,time,at,kind,tool,outcome,source,requesterId,requesterName,decidedById,decidedByName,/);
    expect(lines).toHaveLength(13);
    // The summary holds quotes and a comma: quoted, with its quotes doubled.
    expect(lines[4]).toMatch(/^4,\d{4}-\d\d-\d\dT[^,]+,\d+,approval\.decided,write_file,denied,console,U1,Ann,U-boss,Boss,U-boss,Boss,"\{""path"":""b\.txt"",""content"":""hi, there"",""append"":false\}",/);
    const wrong = await approvals(["export", "--format", "xml"]);
    expect(wrong.code).toBe(2);
  });
});

describe("gatehouse approvals verify", () => {
  it("passes on the log as written", async () => {
    const { code, stdout } = await approvals(["verify"]);
    expect(stdout).toMatch(/^12 entries, chain intact \(head #12 [0-9a-f]{64}\)\n$/);
    expect(code).toBe(0);
  });

  it("names the entry whose field was edited in the database", async () => {
    const dir = copyOfSession("edited");
    const db = database(dir);
    expect(() => db.exec("UPDATE audit SET outcome = 'approved' WHERE seq = 4")).toThrow(/append-only/);
    db.exec("DROP TRIGGER audit_no_update; UPDATE audit SET outcome = 'approved' WHERE seq = 4");
    db.close();
    const { code, stdout } = await approvals(["verify"], dir);
    expect(stdout).toMatch(/^chain BROKEN at row 4 \(approval\.decided at .*\): entry #4 does not match its hash: it was edited after it was written\. 3 entries before it are intact/);
    expect(code).toBe(1);
  });

  it("names where an entry was removed, and where entries were swapped", async () => {
    const removed = copyOfSession("removed");
    let db = database(removed);
    db.exec("DROP TRIGGER audit_no_delete; DELETE FROM audit WHERE seq = 4");
    db.close();
    const afterRemoval = await approvals(["verify"], removed);
    expect(afterRemoval.stdout).toMatch(/entry #5 comes where #4 should: #4 is missing here/);
    expect(afterRemoval.code).toBe(1);

    const swapped = copyOfSession("swapped");
    db = database(swapped);
    db.exec(`DROP TRIGGER audit_no_update;
      UPDATE audit SET id = 1000 WHERE seq = 3; UPDATE audit SET id = 3 WHERE seq = 4; UPDATE audit SET id = 4 WHERE seq = 3`);
    db.close();
    const afterSwap = await approvals(["verify"], swapped);
    expect(afterSwap.stdout).toMatch(/^chain BROKEN at row 3 .*entry #4 comes where #3 should/);
    expect(afterSwap.code).toBe(1);
  });

  it("checks an exported file, and names the line that was changed in it", async () => {
    const file = path.join(root, "export.jsonl");
    writeFileSync(file, (await approvals(["export"])).stdout);
    expect(await approvals(["verify", "--file", file])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^12 entries, chain intact/) });
    writeFileSync(file, readFileSync(file, "utf8").replace('"outcome":"denied"', '"outcome":"approved"'));
    const edited = await approvals(["verify", "--file", file]);
    expect(edited.stdout).toMatch(/row 4 .*entry #4 does not match its hash/);
    expect(edited.code).toBe(1);
  });
});
