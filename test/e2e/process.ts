/**
 * Runs the bot the way a person does — `node src/cli.ts start` in a child process, configured only
 * by environment variables — so that tests see the composition root, config loading and shutdown
 * exactly as `npm start` runs them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");

export interface BotProcess {
  child: ChildProcess;
  dataDir: string;
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the bot with `env` (on top of a minimal environment) in a fresh data folder, or in `dataDir`. */
export function startBotProcess(
  env: Record<string, string>,
  options: { dataDir?: string; keepDataDir?: boolean; /** Its clock this many ms off (skewed-clock.ts). */ clockSkewMs?: number } = {},
): BotProcess {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), "gh-e2e-"));
  const skewed = options.clockSkewMs
    ? { args: ["--import", path.join(import.meta.dirname, "skewed-clock.ts")], env: { GATEHOUSE_TEST_CLOCK_SKEW_MS: String(options.clockSkewMs) } }
    : { args: [], env: {} };
  const child = spawn(process.execPath, [...skewed.args, path.join(root, "src/cli.ts"), "start"], {
    cwd: dataDir,
    env: { PATH: process.env.PATH ?? "", HOME: dataDir, GATEHOUSE_DATA_DIR: path.join(dataDir, "data"), LOG_LEVEL: "info", ...skewed.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    dataDir,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
      if (!options.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
