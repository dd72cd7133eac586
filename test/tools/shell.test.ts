import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
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

/** Whether the heartbeat file a background loop rewrites every 50 ms exists and then stays unchanged. */
async function stopsBeating(file: string): Promise<boolean> {
  const read = () => readFile(file, "utf8").catch(() => undefined);
  const first = await read();
  if (first === undefined) return false;
  await new Promise((r) => setTimeout(r, 400));
  return (await read()) === first;
}

describe("shell", () => {
  it("runs the command in the workspace folder, with a HOME outside it, and reports exit code 0", async () => {
    const result = await shellTool().execute({ command: "pwd; echo $HOME" }, contextFor(box.workspace));
    const real = await realpath(box.workspace);
    expect(result.success).toBe(true);
    const [pwd, home] = result.output.split("\n");
    expect(pwd).toBe(real);
    expect(home).not.toBe(real);
    expect(home!.startsWith(`${real}/`)).toBe(false);
    expect(result.output).toMatch(/\n\[exit code 0\]$/);
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
      { command: "(while true; do date +%s%N > beat; sleep 0.05; done) & sleep 30" },
      contextFor(box.workspace),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ success: false, error: "timed out after 0.3 s; the command was killed" });
    expect(await stopsBeating(path.join(box.workspace, "beat"))).toBe(true);
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
    const token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    const hint = tool.hint?.({ command: `git remote set-url origin https://x:${token}@github.com/o/r` });
    expect(hint).not.toContain(token.slice(0, 8));
    expect(hint).toContain("[redacted]");
  });
});
