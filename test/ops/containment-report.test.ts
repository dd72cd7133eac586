/**
 * Where the shell cannot be sandboxed, `doctor` and `explain` say so, and the shell stays on the
 * console even for people tools.elevated lists, unless shell.allowUnsandboxed accepts the risk.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "./cli-run.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function configDir(config: unknown): string {
  const dir = mkdtempSync(path.join(tmpdir(), "gh-contain-"));
  dirs.push(dir);
  writeFileSync(path.join(dir, "gatehouse.json"), JSON.stringify(config));
  return dir;
}

const ENV = { GATEHOUSE_CONFIG: "gatehouse.json", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" };

describe("no sandbox for the shell", () => {
  it("doctor warns and explain keeps the shell off Slack for an elevated user", async () => {
    const dir = configDir({ shell: { sandbox: "off" }, tools: { elevated: { allowFrom: ["console:*", "slack:U1"] } } });
    const doctor = await runCli(["doctor", "--offline"], ENV, { cwd: dir });
    expect(doctor.stdout).toMatch(/^WARN   shell sandbox: none: shell\.sandbox is off; the shell is offered on the console only$/m);
    const explain = await runCli(["explain", "--channel", "slack", "--sender", "U1", "--no-mcp"], ENV, { cwd: dir });
    expect(explain.stdout).toMatch(/^shell\s+no\s+-\s+shell has no sandbox here \(shell\.sandbox is off\)/m);
    expect(explain.stdout).toContain("shell: NO SANDBOX here (shell.sandbox is off); offered on the console only");
  });

  it("offers it to the elevated user when shell.allowUnsandboxed accepts running unsandboxed, and doctor says what that means", async () => {
    const dir = configDir({ shell: { sandbox: "off", allowUnsandboxed: true }, tools: { elevated: { allowFrom: ["console:*", "slack:U1"] } } });
    const doctor = await runCli(["doctor", "--offline"], ENV, { cwd: dir });
    expect(doctor.stdout).toMatch(/^WARN   shell sandbox: none: .*shell\.allowUnsandboxed is true, so commands run on this machine/m);
    const explain = await runCli(["explain", "--channel", "slack", "--sender", "U1", "--no-mcp"], ENV, { cwd: dir });
    expect(explain.stdout).toMatch(/^shell\s+yes\s+prompt/m);
  });
});
