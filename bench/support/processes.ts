/**
 * Child processes for benchmarks: a bot started with `node <script>` in its own temp folder,
 * measured from the outside (CPU time and RSS from /proc/<pid>), its output kept as a bounded
 * tail, and stopped with SIGTERM then SIGKILL. Every process started here is killed and every
 * temp folder removed when the benchmark exits, however it exits.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** The repository root (bench/support/ → ../..). */
export const repoRoot = path.resolve(import.meta.dirname, "../..");

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let cleanupInstalled = false;

/** Kills what is still running and removes temp folders; safe to call more than once. */
export function cleanupAll(): void {
  for (const child of live) {
    try {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  live.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on("exit", cleanupAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      cleanupAll();
      process.exit(130);
    });
  }
}

/** A fresh temp folder, removed by `cleanupAll` (or earlier with `removeTempDir`). */
export function makeTempDir(prefix = "gh-bench-"): string {
  installCleanup();
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

let clockTicks: number | undefined;
/** Clock ticks per second of /proc/<pid>/stat times (usually 100). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** User + system CPU time of a process so far, in ms (NaN when it cannot be read). */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / ticksPerSecond();
  } catch {
    return Number.NaN;
  }
}

/** Resident set size and its peak, in MB (NaN when they cannot be read). */
export function memoryMbOf(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
  } catch {
    return { rss: Number.NaN, peak: Number.NaN };
  }
}

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Its own temp folder (cwd and HOME), removed by `stop`. */
  dir: string;
  /** The last ~256 KB of stdout and stderr. */
  output(): string;
  /** Resolves when a line of output matches, or rejects on exit or after `timeoutMs`. */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<void>;
  exited(): boolean;
  cpuMs(): number;
  memoryMb(): { rss: number; peak: number };
  /** SIGTERM, then SIGKILL after `graceMs`; removes the temp folder; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

export interface SpawnOptions {
  name: string;
  /** Script path relative to the repository root, run with this Node. */
  script: string;
  args?: string[];
  /** The environment, on top of PATH and HOME only (nothing else of ours leaks in). */
  env: Record<string, string>;
  /** Use this folder instead of a fresh temp folder (it is still removed on stop). */
  dir?: string;
}

const OUTPUT_LIMIT = 256 * 1024;

/** Starts `node <script>` with only the given environment. */
export function spawnNode(options: SpawnOptions): ManagedProcess {
  installCleanup();
  const dir = options.dir ?? makeTempDir(`gh-bench-${options.name}-`);
  tempDirs.add(dir);
  const child = spawn(process.execPath, [path.join(repoRoot, options.script), ...(options.args ?? [])], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let out = "";
  const listeners = new Set<(chunk: string) => void>();
  const onData = (d: Buffer) => {
    const text = d.toString();
    out += text;
    // Keeps the last OUTPUT_LIMIT characters, from the start of a line.
    if (out.length > OUTPUT_LIMIT) {
      const cut = out.indexOf("\n", out.length - OUTPUT_LIMIT);
      out = cut < 0 ? out.slice(out.length - OUTPUT_LIMIT) : out.slice(cut + 1);
    }
    for (const l of listeners) l(text);
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exit = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      live.delete(child);
      resolve(code);
    }),
  );
  if (child.pid === undefined) throw new Error(`could not start ${options.script}`);
  const pid = child.pid;

  return {
    name: options.name,
    child,
    pid,
    dir,
    output: () => out,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    waitForOutput(pattern, timeoutMs) {
      return new Promise<void>((resolve, reject) => {
        let seen = out;
        const done = (err?: Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (err) reject(err);
          else resolve();
        };
        const check = (chunk: string) => {
          seen += chunk;
          if (pattern.test(seen)) done();
        };
        const timer = setTimeout(() => done(new Error(`${options.name}: no output matching ${pattern} within ${timeoutMs} ms`)), timeoutMs);
        listeners.add(check);
        void exit.then((code) => done(new Error(`${options.name} exited (code ${code})`)));
        check("");
      });
    },
    cpuMs: () => cpuMsOf(pid),
    memoryMb: () => memoryMbOf(pid),
    async stop(graceMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([exit, new Promise<null>((r) => (timer = setTimeout(() => r(null), graceMs)))]);
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exit;
      }
      removeTempDir(dir);
      return code;
    },
  };
}
