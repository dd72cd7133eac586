import { readFileSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { shellTool } from "../../src/tools/builtin/shell.ts";
import { contextFor, makeSandbox } from "./context.ts";

let box: Awaited<ReturnType<typeof makeSandbox>>;
beforeEach(async () => {
  box = await makeSandbox();
});
afterEach(async () => {
  delete process.env.SECRET_TOKEN;
  await box.cleanup();
});

/** Whether a process with this pid is still running (a killed child nobody reaped yet is a zombie, not running). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe("shell", () => {
  it("runs the command in the workspace folder and reports exit code 0", async () => {
    const result = await shellTool().execute({ command: "pwd; echo $HOME" }, contextFor(box.workspace));
    const real = await realpath(box.workspace);
    expect(result).toEqual({ success: true, output: `${real}\n${real}\n[exit code 0]` });
  });

  it("fails with the exit code and keeps the output of a failing command", async () => {
    const result = await shellTool().execute({ command: "echo oops >&2; exit 3" }, contextFor(box.workspace));
    expect(result).toMatchObject({ success: false, error: "exit code 3", output: "oops\n[exit code 3]" });
  });

  it("does not pass the bot's secrets to the command", async () => {
    process.env.SECRET_TOKEN = "xyzzy-do-not-leak";
    const result = await shellTool().execute({ command: "env" }, contextFor(box.workspace));
    expect(result.success).toBe(true);
    expect(result.output).not.toContain("xyzzy-do-not-leak");
    expect(result.output).not.toMatch(/TOKEN|KEY|SECRET|PASSWORD/);
    const names = result.output.split("\n").filter((l) => l.includes("=")).map((l) => l.split("=")[0]);
    expect(names.filter((n) => !["PWD", "SHLVL", "_", "OLDPWD"].includes(n)).sort()).toEqual(["HOME", "LANG", "PATH", "TERM"]);
  });

  it("kills a command that runs past its timeout, children included", async () => {
    const started = Date.now();
    const result = await shellTool({ timeoutMs: 300 }).execute(
      { command: "sleep 30 & echo child=$!; sleep 30" },
      contextFor(box.workspace),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ success: false, error: "timed out after 0.3 s; the command was killed" });
    const child = Number(/child=(\d+)/.exec(result.output)?.[1]);
    expect(child).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(running(child)).toBe(false);
  });

  it("kills the command when the turn is cancelled", async () => {
    const controller = new AbortController();
    const running = shellTool().execute({ command: "echo started; sleep 30" }, contextFor(box.workspace, controller.signal));
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const result = await running;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ success: false, error: "cancelled; the command was killed" });
    expect(result.output).toMatch(/^started\n/);
  });

  it("caps long output, keeping its start and its end", async () => {
    const result = await shellTool({ maxOutputChars: 200 }).execute(
      { command: "echo FIRST; seq 1 5000; echo LAST" },
      contextFor(box.workspace),
    );
    expect(result.success).toBe(true);
    expect(result.output.startsWith("FIRST\n")).toBe(true);
    expect(result.output).toMatch(/\[… \d+ characters of output cut …\]/);
    expect(result.output).toMatch(/LAST\n\[exit code 0\]$/);
    expect(result.output.length).toBeLessThan(400);
  });

  it("shows the command, cut to 60 characters, as its progress hint", () => {
    const tool = shellTool();
    expect(tool.hint?.({ command: "ls -la" })).toBe("ls -la");
    expect(tool.hint?.({ command: "x".repeat(100) })).toHaveLength(60);
  });
});
