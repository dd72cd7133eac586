import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import type { AuditEntry } from "../../src/store/store.ts";
import { leadingWordsPattern, RuleEvidence } from "../../src/approval/suggest-rules.ts";
import { REPO, runCli } from "./cli-run.ts";

const FIXTURE_LOG = path.join(import.meta.dirname, "fixtures/decision-log.jsonl");
const MCP_SERVER = path.join(import.meta.dirname, "fixtures/annotated-mcp-server.ts");

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data folder whose decision log holds the fixture log, and a config file naming the annotated MCP server. */
async function botFolder(entries: AuditEntry[]): Promise<Record<string, string>> {
  const dir = mkdtempSync(path.join(tmpdir(), "gh-suggest-"));
  dirs.push(dir);
  const dataDir = path.join(dir, "data");
  const store = await openSqliteStore({ dataDir });
  for (const entry of entries) await store.appendAudit(entry);
  await store.close();
  const configFile = path.join(dir, "gatehouse.json");
  writeFileSync(configFile, JSON.stringify({
    approval: { alwaysAsk: ["http_fetch"] },
    mcp: { servers: { gh: { command: process.execPath, args: [MCP_SERVER] } } },
  }));
  return { GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_CONFIG: configFile, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" };
}

function fixtureLog(): AuditEntry[] {
  return readFileSync(FIXTURE_LOG, "utf8").trim().split("\n").map((line) => JSON.parse(line) as AuditEntry);
}

/** The config fragment after the comment block. */
function fragmentOf(stdout: string): { approval: { autoApprove?: string[]; rules?: Array<Record<string, unknown>> } } {
  return JSON.parse(stdout.slice(stdout.indexOf("\n{") + 1));
}

describe("gatehouse approvals suggest", () => {
  it("proposes an approver rule for the shell commands people always approved, and autoApprove only for tools that cannot destroy", async () => {
    const env = await botFolder(fixtureLog());
    const { code, stdout, stderr } = await runCli(["approvals", "suggest"], env, { cwd: REPO, timeoutMs: 30_000 });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const { approval } = fragmentOf(stdout);

    expect(approval.rules).toContainEqual({
      tools: ["shell"], when: [{ arg: "command", matches: "^\\s*kubectl\\s+get\\b" }],
      approvers: { users: ["U1", "U2"] }, selfApprove: true, quorum: 1,
    });
    expect(stdout).toMatch(/6 requests, all approved: Ana \(U1\) ×4, Bo \(U2\) ×2; last seen 2025-01-01T\d\d:\d\d:\d\d\.\d{3}Z; 2 approved by the person who asked/);
    // Writing and destroying tools get rules naming their approvers, never an approval by policy.
    expect(approval.rules).toContainEqual({ tools: ["write_file"], approvers: { users: ["U2"] }, selfApprove: false, quorum: 1 });
    expect(approval.rules).toContainEqual({ tools: ["gh__drop_table"], approvers: { users: ["U2"] }, selfApprove: false, quorum: 1 });
    expect(approval.autoApprove).toEqual(["current_time", "list_files", "read_file", "tool_search", "gh__create_issue", "gh__search_issues", "http_fetch"]);
    expect(approval.autoApprove).not.toContain("shell");
    expect(stdout).toContain('also remove "http_fetch" from approval.alwaysAsk');

    // A group with one denial, one with a timeout and one too small propose nothing.
    const shellPatterns = (approval.rules ?? []).filter((r) => (r.tools as string[]).includes("shell")).map((r) => r.when);
    expect(shellPatterns).toEqual([[{ arg: "command", matches: "^\\s*kubectl\\s+get\\b" }]]);
    // Decisions by policy and by a remembered Always are not evidence of what people approve.
    const evidence = stdout.split("\n").filter((line) => line.startsWith("//"));
    expect(evidence.join("\n")).not.toContain("current_time");
  });

  it("never proposes autoApprove for shell however few requests it takes, and proposes none for tools whose risk it cannot learn", async () => {
    const env = await botFolder(fixtureLog());
    const { code, stdout } = await runCli(["approvals", "suggest", "--min", "1", "--no-mcp"], env, { timeoutMs: 30_000 });
    expect(code).toBe(0);
    const { approval } = fragmentOf(stdout);
    expect(approval.autoApprove).toEqual(["current_time", "list_files", "read_file", "tool_search", "http_fetch"]);
    const shellRules = (approval.rules ?? []).filter((r) => (r.tools as string[]).includes("shell"));
    expect(shellRules.map((r) => (r.when as Array<{ matches: string }>)[0]!.matches)).toEqual(["^\\s*kubectl\\s+get\\b", "^\\s*ls\\b"]);
    expect(approval.rules).toContainEqual(expect.objectContaining({ tools: ["gh__create_issue"] }));
    expect(stdout).toMatch(/gh__create_issue[^\n]*\n[^\n]*\n\/\/ {3}its risk is not known here/);
  });

  it("says so when the log supports no rule, and refuses a bad --min", async () => {
    const env = await botFolder([]);
    const none = await runCli(["approvals", "suggest", "--no-mcp"], env);
    expect(none.stdout).toMatch(/^No rule to suggest: no tool or command was approved by a person in 5 or more requests/);
    expect(none.code).toBe(0);
    const bad = await runCli(["approvals", "suggest", "--min", "zero", "--no-mcp"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--min must be a whole number/);
  });
});

describe("suggested command patterns", () => {
  it("match the command's program and subcommand, and nothing that only starts alike", () => {
    const pattern = new RegExp(leadingWordsPattern("kubectl get pods -n prod")!);
    expect(pattern.test("kubectl get nodes")).toBe(true);
    expect(pattern.test("  kubectl   get svc")).toBe(true);
    expect(pattern.test("kubectl getx")).toBe(false);
    expect(pattern.test("kubectl delete pod x")).toBe(false);
    expect(leadingWordsPattern("./deploy.sh --force")).toBe("^\\s*\\./deploy\\.sh\\b");
    const compiler = new RegExp(leadingWordsPattern("g++ -O2 main.cpp")!);
    expect([compiler.test("g++ x.cpp"), compiler.test("g++"), compiler.test("g+++ x")]).toEqual([true, true, false]);
  });

  it("group a shell call whose command was cut short under the tool, and still propose no autoApprove for it", () => {
    const evidence = new RuleEvidence();
    for (let i = 0; i < 6; i++) {
      evidence.add({ at: i, kind: "approval.decided", tool: "shell", argsSummary: "{\"command\"", source: "console", outcome: "approved", decidedById: "U1" });
    }
    const [only] = evidence.suggestions(5, new Map([["shell", { risk: "exec", owner: "builtin" }]]), { alwaysAsk: [] });
    expect(only).toMatchObject({ kind: "approverRule", tool: "shell", count: 6 });
    expect(only!.when).toBeUndefined();
  });
});
