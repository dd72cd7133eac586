/**
 * The bench side of bench/support/probe-preload.ts: the environment that loads the probe into a
 * bot process, reading its snapshots, and asking it (SIGUSR2) for a forced GC, a profile
 * start/stop and a fresh snapshot.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { ManagedProcess } from "./processes.ts";

export interface ProbeSnapshot {
  seq: number;
  at: number;
  pid: number;
  memory: { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
  gcs: number;
  /** "<verb> <sql>" → times run. */
  sqlite: Record<string, number>;
  profiles: string[];
  profiling: boolean;
}

const PRELOAD = path.join(import.meta.dirname, "probe-preload.ts");

/** Environment that loads the probe; `out` is where it writes its snapshots. */
export function probeEnv(out: string, options: { profileDir?: string } = {}): Record<string, string> {
  return {
    NODE_OPTIONS: `--import=${PRELOAD}`,
    BENCH_PROBE_OUT: out,
    ...(options.profileDir ? { BENCH_PROBE_PROFILE_DIR: options.profileDir } : {}),
  };
}

export function readProbe(out: string): ProbeSnapshot | undefined {
  if (!existsSync(out)) return undefined;
  try {
    return JSON.parse(readFileSync(out, "utf8")) as ProbeSnapshot;
  } catch {
    return undefined;
  }
}

/** Sends SIGUSR2 (GC, profile toggle) and resolves with the snapshot written after it (undefined on timeout). */
export async function probeSignal(proc: ManagedProcess, out: string, timeoutMs = 10_000): Promise<ProbeSnapshot | undefined> {
  const before = readProbe(out)?.seq ?? 0;
  proc.child.kill("SIGUSR2");
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const s = readProbe(out);
    if (s && s.seq > before) return s;
    await new Promise((r) => setTimeout(r, 25));
  }
  return undefined;
}

/** Statement counts of `b` minus those of `a`, grouped as writes / reads / transaction control. */
export function sqliteDelta(a: ProbeSnapshot | undefined, b: ProbeSnapshot | undefined): { writes: number; reads: number; tx: number; byStatement: Array<[string, number]> } {
  const delta = new Map<string, number>();
  for (const [k, n] of Object.entries(b?.sqlite ?? {})) {
    const d = n - (a?.sqlite[k] ?? 0);
    if (d > 0) delta.set(k, d);
  }
  let writes = 0;
  let reads = 0;
  let tx = 0;
  for (const [k, n] of delta) {
    const sql = k.slice(k.indexOf(" ") + 1).toUpperCase();
    if (/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/.test(sql)) tx += n;
    else if (/^(INSERT|UPDATE|DELETE|REPLACE)/.test(sql)) writes += n;
    else reads += n;
  }
  return { writes, reads, tx, byStatement: [...delta].sort((x, y) => y[1] - x[1]) };
}
