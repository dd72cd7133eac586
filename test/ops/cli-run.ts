/**
 * Runs the `gatehouse` CLI as a child process, as an operator would, with a chosen
 * environment (only what the test passes, plus PATH and HOME) and cwd.
 */
import { spawn } from "node:child_process";
import path from "node:path";

export const REPO = path.resolve(import.meta.dirname, "../..");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node src/cli.ts ...args`; resolves when the process exits (or is killed after timeoutMs). */
export function runCli(args: string[], env: Record<string, string>, options: { cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(REPO, "src/cli.ts"), ...args], {
      cwd: options.cwd ?? REPO,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 15_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
