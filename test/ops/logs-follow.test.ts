import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openRotatingLog } from "../../src/observe/log-files.ts";
import { REPO, runCli } from "./cli-run.ts";

let dataDir: string;
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const line = (fields: Record<string, unknown>) => `${JSON.stringify({ level: 30, time: new Date().toISOString(), ...fields })}\n`;

describe("gatehouse logs", () => {
  it("--follow prints lines written after it started, across a rotation, until SIGINT", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-follow-"));
    const log = openRotatingLog(dataDir, { maxBytes: 400 });
    log.write(line({ event: "turn.start", msg: "turn.start", traceId: "old0000000" }));
    const child = spawn(process.execPath, [path.join(REPO, "src/cli.ts"), "logs", "--follow"], {
      env: { PATH: process.env.PATH ?? "", GATEHOUSE_DATA_DIR: dataDir },
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    const seen = async (text: string) => {
      for (const started = Date.now(); !stdout.includes(text); await new Promise((r) => setTimeout(r, 20))) {
        if (Date.now() - started > 5000) throw new Error(`did not see ${text}; got:\n${stdout}`);
      }
    };
    await seen("old0000000");
    log.write(line({ event: "tool.finish", msg: "tool.finish", traceId: "new0000001", tool: "shell", ms: 1234 }));
    await seen("new0000001");
    // Enough to rotate the file: the follower must read on in the new one.
    for (let i = 0; i < 4; i++) log.write(line({ event: "model.request", msg: "model.request", traceId: `rot000000${i}` }));
    await seen("rot0000003");
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(stdout).toMatch(/new0000001  tool\.finish\s+1234ms tool=shell/);
    for (let i = 0; i < 4; i++) expect(stdout).toContain(`rot000000${i}`);
  });

  it("--session and --since narrow the lines; --json prints them unchanged", async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-filter-"));
    const log = openRotatingLog(dataDir);
    const old = JSON.stringify({ level: 30, time: new Date(Date.now() - 3_600_000).toISOString(), event: "turn.start", sessionKey: "slack:C1:1", traceId: "aaaaaaaaaa" });
    log.write(`${old}\n`);
    const recent = JSON.stringify({ level: 30, time: new Date().toISOString(), event: "turn.start", sessionKey: "slack:C1:1", traceId: "bbbbbbbbbb" });
    log.write(`${recent}\n`);
    log.write(line({ event: "turn.start", sessionKey: "telegram:42", traceId: "cccccccccc" }));
    const bySession = await runCli(["logs", "--session", "slack:C1:1", "--json"], { GATEHOUSE_DATA_DIR: dataDir });
    expect(bySession.stdout).toBe(`${old}\n${recent}\n`);
    const since = await runCli(["logs", "--session", "slack:C1:1", "--since", "10m"], { GATEHOUSE_DATA_DIR: dataDir });
    expect(since.stdout).toContain("bbbbbbbbbb");
    expect(since.stdout).not.toContain("aaaaaaaaaa");
    const bad = await runCli(["logs", "--since", "yesterday-ish"], { GATEHOUSE_DATA_DIR: dataDir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("neither a duration");
  });
});
