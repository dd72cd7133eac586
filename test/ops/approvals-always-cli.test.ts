import { afterEach, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { runCli } from "./cli-run.ts";

let dataDir: string | undefined;
afterEach(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

const THREAD = "session:slack:C0GEN:1712.5|sender:slack:U0ANN";

/** A data folder whose store remembers three decisions: one for Ann in a thread, one for a whole conversation, one expired. */
async function storeWithDecisions(): Promise<string> {
  dataDir = await mkdtemp(path.join(tmpdir(), "gatehouse-always-cli-"));
  const store = await openSqliteStore({ dataDir });
  await store.rememberAlways(THREAD, "shell", Date.parse("2025-01-31T09:00:00Z"), { personName: "Ann" });
  await store.rememberAlways("conversation:telegram:-10042", "http_fetch", Date.parse("2025-02-01T10:30:00Z"), {
    expiresAt: Date.parse("2999-02-08T10:30:00Z"),
  });
  await store.rememberAlways("sender:discord:200", "write_file", Date.parse("2025-01-01T00:00:00Z"), { expiresAt: Date.parse("2025-01-08T00:00:00Z") });
  await store.close();
  return dataDir;
}

const cli = (dir: string, ...args: string[]) =>
  runCli(["approvals", "always", ...args], { GATEHOUSE_DATA_DIR: dir, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });

describe("gatehouse approvals always", () => {
  it("lists every remembered decision across scopes: id, tool, who, when given, when it expires", async () => {
    const dir = await storeWithDecisions();
    const listed = await cli(dir);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TOOL\s+WHO\s+GIVEN\s+EXPIRES\s+SCOPE$/);
    expect(lines).toHaveLength(4);
    const shell = lines.find((l) => l.includes(" shell "))!;
    expect(shell).toContain("Ann (slack:U0ANN)");
    expect(shell).toContain("2025-01-31 09:00 UTC");
    expect(shell).toMatch(/ never /);
    expect(shell).toContain(THREAD);
    expect(lines.find((l) => l.includes("http_fetch"))).toMatch(/everyone there\s+2025-02-01 10:30 UTC\s+2999-02-08 10:30 UTC\s+conversation:telegram:-10042$/);
    expect(lines.find((l) => l.includes("write_file"))).toContain("expired 2025-01-08 00:00 UTC");
  });

  it("narrows the list to one kind of scope, or one scope, and writes JSON lines", async () => {
    const dir = await storeWithDecisions();
    const sessions = await cli(dir, "--scope", "session", "--json");
    expect(sessions.code).toBe(0);
    const [only, ...rest] = sessions.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rest).toEqual([]);
    expect(only).toMatchObject({
      tool: "shell", scope: THREAD, kind: "session", place: "slack:C0GEN:1712.5", person: "slack:U0ANN", personName: "Ann",
      givenAt: "2025-01-31T09:00:00.000Z", expiresAt: null, expired: false,
    });
    const one = await cli(dir, "--scope", "conversation:telegram:-10042", "--json");
    expect(one.stdout.trim().split("\n").map((l) => (JSON.parse(l) as { tool: string }).tool)).toEqual(["http_fetch"]);
    const none = await cli(dir, "--scope", "session:slack:C9");
    expect(none.stdout).toBe("No remembered \"Always\" decisions in session:slack:C9.\n");
  });

  it("revokes a decision by id, so that it no longer applies, and says when the id is unknown", async () => {
    const dir = await storeWithDecisions();
    const [shell] = (await cli(dir, "--scope", "session", "--json")).stdout.trim().split("\n").map((l) => JSON.parse(l) as { id: string });
    const revoked = await cli(dir, "--revoke", shell!.id);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toBe(`Revoked ${shell!.id}: shell for Ann (slack:U0ANN) in ${THREAD}. It asks again from its next call.\n`);

    const store = await openSqliteStore({ dataDir: dir });
    expect(await store.hasAlways(THREAD, "shell")).toBe(false);
    expect((await store.listAlwaysRules()).map((r) => r.tool)).toEqual(["http_fetch", "write_file"]);
    expect((await store.listAudit({ kind: "always.revoked" })).map((e) => [e.tool, e.source, e.detail])).toEqual([["shell", "cli", THREAD]]);
    await store.close();

    const again = await cli(dir, "--revoke", shell!.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`No remembered decision has the id "${shell!.id}"`);
  });

  it("refuses bad usage with the usage line", async () => {
    const dir = await storeWithDecisions();
    const badScope = await cli(dir, "--scope", "everywhere");
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toContain("usage: gatehouse approvals always");
    expect((await cli(dir, "--revoke", "x y")).code).toBe(2);
    expect((await cli(dir, "extra")).code).toBe(2);
    const help = await runCli(["approvals", "always", "--help"], { GATEHOUSE_DATA_DIR: dir });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("always [--scope S] [--json] | always --revoke ID");
  });
});
