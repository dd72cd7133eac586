/**
 * The `gatehouse` command as a person runs it after `npm install`: `npx gatehouse`, or the bin on
 * whatever Node the machine has (the system Node here is 20, older than the sources need).
 */
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO } from "./cli-run.ts";

const BIN = path.join(REPO, "bin/gatehouse.js");
const SYSTEM_NODE = "/usr/bin/node";
const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"].join(":");
const VERSION = (JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as { version: string }).version;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO,
      env: { PATH: SYSTEM_PATH, HOME: process.env.HOME ?? "/tmp", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const systemNodeVersion = existsSync(SYSTEM_NODE) ? (await run(SYSTEM_NODE, ["-p", "process.versions.node"])).stdout.trim() : undefined;
const systemNodeTooOld = systemNodeVersion !== undefined && !/^(2[3-9]|[3-9]\d|22\.(1[89]|[2-9]\d))/.test(systemNodeVersion);

describe("gatehouse --version and --help", () => {
  it("prints the package version", async () => {
    const result = await run(process.execPath, [BIN, "--version"]);
    expect(result).toMatchObject({ code: 0, stdout: `gatehouse ${VERSION}\n` });
  });

  for (const command of ["start", "doctor", "status", "logs", "explain", "approvals", "receipts", "config", "schedules", "store", "slack", "discord"]) {
    it(`explains \`${command} --help\` and exits 0`, async () => {
      const result = await run(process.execPath, [BIN, command, "--help"]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^usage: gatehouse ${command}`));
    });
  }

  it("takes help as `gatehouse help <command>` and after a subcommand", async () => {
    expect((await run(process.execPath, [BIN, "help", "logs"])).stdout).toMatch(/^usage: gatehouse logs/);
    expect((await run(process.execPath, [BIN, "receipts", "verify", "--help"])).stdout).toMatch(/^usage: gatehouse receipts verify/);
  });

  it("names the command's help for an unknown option, with exit code 2", async () => {
    const result = await run(process.execPath, [BIN, "logs", "--bogus"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("gatehouse logs: Unknown option '--bogus'");
    expect(result.stderr).toContain("gatehouse logs --help");
  });
});

describe.skipIf(!systemNodeTooOld)(`on the machine's own Node (${systemNodeVersion ?? "none"})`, () => {
  it("runs itself again on the bundled Node", async () => {
    expect(await run(SYSTEM_NODE, [BIN, "--version"])).toMatchObject({ code: 0, stdout: `gatehouse ${VERSION}\n` });
    const help = await run(SYSTEM_NODE, [BIN, "logs", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: gatehouse logs/);
  });

  it("passes the exit code through", async () => {
    expect((await run(SYSTEM_NODE, [BIN, "no-such-command"])).code).toBe(2);
  });

  it("says which Node it needs when none is bundled", async () => {
    const bare = mkdtempSync(path.join(tmpdir(), "gh-bare-"));
    try {
      mkdirSync(path.join(bare, "bin"));
      copyFileSync(BIN, path.join(bare, "bin", "gatehouse.js"));
      const result = await run(SYSTEM_NODE, [path.join(bare, "bin", "gatehouse.js"), "--version"], { cwd: bare });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("gatehouse needs Node.js 22.18 or newer");
      expect(result.stderr).toContain(systemNodeVersion);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it("works as `npx gatehouse` after npm install", async () => {
    const version = await run("npx", ["--no-install", "gatehouse", "--version"]);
    expect(version.stdout).toBe(`gatehouse ${VERSION}\n`);
    expect(version.code).toBe(0);
    const help = await run("npx", ["--no-install", "gatehouse", "logs", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: gatehouse logs/);
  }, 120_000);
});
