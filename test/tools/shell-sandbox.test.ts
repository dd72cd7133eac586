/**
 * The shell as an attacker uses it: a child that leaves the process group with setsid, reading the
 * bot's environment through /proc, and HOME as a place to plant startup files. These need the
 * bubblewrap sandbox (CI installs it); without it the shell is console-only, which the last test checks.
 */
import { readFileSync } from "node:fs";
import { readFile, realpath, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { shellTool } from "../../src/tools/builtin/shell.ts";
import { detectSandbox } from "../../src/tools/sandbox.ts";
import { toolAvailability } from "../../src/policy/tool-policy.ts";
import { ApprovalConfigSchema, ToolPolicyConfigSchema } from "../../src/policy/schema.ts";
import { contextFor, makeSandbox } from "./context.ts";

const sandbox = detectSandbox();
const withSandbox = sandbox.kind === "bubblewrap";

let box: Awaited<ReturnType<typeof makeSandbox>>;
beforeEach(async () => {
  box = await makeSandbox();
});
afterEach(async () => {
  delete process.env.GATEHOUSE_TEST_PLANTED;
  await box.cleanup();
});

/** Whether the heartbeat file a background loop rewrites every 50 ms exists and then stays unchanged. */
async function stopsBeating(file: string): Promise<boolean> {
  const read = () => readFile(file, "utf8").catch(() => undefined);
  const first = await read();
  if (first === undefined) return false;
  await new Promise((r) => setTimeout(r, 500));
  return (await read()) === first;
}

describe.runIf(withSandbox)("the sandboxed shell", () => {
  it("kills a setsid child that left the process group once the timeout ends the command", async () => {
    const result = await shellTool({ timeoutMs: 400 }).execute(
      { command: "setsid sh -c 'while true; do date +%s%N > beat; sleep 0.05; done' & sleep 30" },
      contextFor(box.workspace),
    );
    expect(result.error).toBe("timed out after 0.4 s; the command was killed");
    expect(await stopsBeating(path.join(box.workspace, "beat"))).toBe(true);
  });

  it("kills a setsid child when the turn is stopped", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 400);
    const result = await shellTool().execute(
      { command: "setsid sh -c 'while true; do date +%s%N > beat; sleep 0.05; done' & sleep 30" },
      contextFor(box.workspace, controller.signal),
    );
    expect(result.error).toBe("cancelled; the command was killed");
    expect(await stopsBeating(path.join(box.workspace, "beat"))).toBe(true);
  });

  it("cannot read the bot's environment: not through its own variables, /proc/$PPID/environ or the bot's pid", async () => {
    process.env.GATEHOUSE_TEST_PLANTED = "planted-secret-4711";
    const botEnv = readFileSync("/proc/self/environ", "utf8").split("\0").filter((kv) => /^[A-Z_][A-Z0-9_]*=.{6,}/.test(kv));
    const result = await shellTool().execute(
      { command: `env; cat /proc/$PPID/environ; cat /proc/1/environ; cat /proc/${process.pid}/environ; ls /proc | grep -c '^[0-9]'` },
      contextFor(box.workspace),
    );
    expect(result.output).not.toContain("planted-secret-4711");
    for (const kv of botEnv) if (!kv.startsWith("LANG=")) expect(result.output).not.toContain(kv);
    const processes = Number(/(\d+)\n\[exit code \d+\]$/.exec(result.output)?.[1]);
    expect(processes).toBeLessThan(10);
  });

  it("gives HOME outside the workspace, so files planted there are not read as the user's startup files", async () => {
    await writeFile(path.join(box.workspace, ".gitconfig"), "[alias]\n\tst = !echo PLANTED\n");
    const result = await shellTool().execute({ command: "echo home=$HOME; ls -a $HOME; touch $HOME/.profile" }, contextFor(box.workspace));
    const home = /home=(\S+)/.exec(result.output)?.[1];
    const workspace = await realpath(box.workspace);
    expect(home).toBeDefined();
    expect(home === workspace || home!.startsWith(`${workspace}/`)).toBe(false);
    expect(result.output).not.toContain(".gitconfig");
    await expect(readFile(path.join(box.workspace, ".profile"))).rejects.toThrow();
  });

  it("can write only the workspace", async () => {
    const result = await shellTool().execute(
      { command: `touch ok.txt && echo ws-ok; touch /usr/pwned 2>/dev/null || echo usr-ro; touch ${box.outside}/pwned 2>/dev/null || echo outside-refused` },
      contextFor(box.workspace),
    );
    expect(result.output).toMatch(/ws-ok\nusr-ro\noutside-refused/);
    await expect(readFile(path.join(box.outside, "pwned"))).rejects.toThrow();
  });
});

describe("the shell without a sandbox", () => {
  it("is offered on the console only, unless shell.allowUnsandboxed", () => {
    const tools = ToolPolicyConfigSchema.parse({ elevated: { allowFrom: ["console:*", "slack:U1"] } });
    const approval = ApprovalConfigSchema.parse({});
    const bare = shellTool({ sandbox: "off" });
    expect(toolAvailability(tools, approval, bare, { channel: "slack", senderId: "U1" })).toMatchObject({
      offered: false,
      rule: expect.stringMatching(/no sandbox here .*shell\.allowUnsandboxed/),
    });
    expect(toolAvailability(tools, approval, bare, { channel: "console", senderId: "local" }).offered).toBe(true);
    const accepted = shellTool({ sandbox: "off", allowUnsandboxed: true });
    expect(toolAvailability(tools, approval, accepted, { channel: "slack", senderId: "U1" }).offered).toBe(true);
  });
});
