/**
 * A probe loaded into a bot process by a benchmark (`NODE_OPTIONS=--import <this file>`), so that
 * the bot itself (`node bin/gatehouse.js start`) runs unchanged while the bench looks inside it:
 *   - counts every node:sqlite statement the process runs (prepared `run`/`get`/`all`/`iterate`
 *     by SQL text, and `exec`), so that store work per message can be read off;
 *   - on SIGUSR2: forces a full, memory-reducing GC (V8's gc, exposed here), optionally starts or stops a CPU
 *     profile (BENCH_PROBE_PROFILE_DIR; the profile is written there as a .cpuprofile), and
 *     writes a snapshot at once;
 *   - writes a JSON snapshot to BENCH_PROBE_OUT every 250 ms, on SIGUSR2 and at exit:
 *     `{ seq, at, memory: process.memoryUsage(), sqlite: { "<verb> <sql>": n }, profiles: [...] }`.
 * Read it from the bench with `readProbe` / `probeSignal` (bench/support/probe.ts).
 */
import { writeFileSync, renameSync, mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, StatementSync } from "node:sqlite";
import { Session } from "node:inspector/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const out = process.env.BENCH_PROBE_OUT;
const profileDir = process.env.BENCH_PROBE_PROFILE_DIR;

const counts: Record<string, number> = {};
const key = (verb: string, sql: string) => `${verb} ${sql.replace(/\s+/g, " ").trim().slice(0, 120)}`;

for (const verb of ["run", "get", "all", "iterate"] as const) {
  const original = StatementSync.prototype[verb] as (...args: unknown[]) => unknown;
  (StatementSync.prototype as unknown as Record<string, unknown>)[verb] = function (this: StatementSync, ...args: unknown[]) {
    const k = key(verb, this.sourceSQL);
    counts[k] = (counts[k] ?? 0) + 1;
    return original.apply(this, args);
  };
}
const originalExec = DatabaseSync.prototype.exec;
DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
  const k = key("exec", sql);
  counts[k] = (counts[k] ?? 0) + 1;
  return originalExec.call(this, sql);
};

// V8's gc, exposed here. The "last-resort" flavour (several full GCs that also shrink the young
// generation and hand empty pages back) gives what a long quiet period would, once V8's memory
// reducer ran: a plain gc() leaves the heap as large as the last burst made it.
let gc: (() => void) | undefined;
try {
  setFlagsFromString("--expose-gc");
  const exposed = runInNewContext("gc") as (options?: { type: string; execution: string; flavor?: string }) => void;
  gc = () => {
    try {
      exposed({ type: "major", execution: "sync", flavor: "last-resort" });
    } catch {
      exposed();
    }
  };
} catch {
  gc = undefined;
}

let seq = 0;
let gcs = 0;
const profiles: string[] = [];
let session: Session | undefined;

function snapshot(): void {
  if (!out) return;
  const body = JSON.stringify({ seq, at: Date.now(), pid: process.pid, memory: process.memoryUsage(), gcs, sqlite: counts, profiles, profiling: session !== undefined });
  try {
    writeFileSync(`${out}.tmp`, body);
    renameSync(`${out}.tmp`, out);
  } catch {
    // the bench's folder went away; nothing to report to
  }
}

async function toggleProfile(): Promise<void> {
  if (!profileDir) return;
  if (!session) {
    session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: Number(process.env.BENCH_PROBE_INTERVAL_US ?? 1000) });
    await session.post("Profiler.start");
    return;
  }
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  session = undefined;
  mkdirSync(profileDir, { recursive: true });
  const file = path.join(profileDir, `gatehouse-${process.pid}-${profiles.length + 1}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  profiles.push(file);
}

process.on("SIGUSR2", () => {
  void (async () => {
    // A profile starts after the GC and stops before it, so that the forced GC is not in it.
    const starting = session === undefined;
    if (starting && gc) {
      gc();
      gcs++;
    }
    try {
      await toggleProfile();
    } catch (err) {
      process.stderr.write(`probe: profile failed: ${(err as Error).message}\n`);
    }
    if (!starting && gc) {
      gc();
      gcs++;
    }
    seq++;
    snapshot();
  })();
});

if (out) {
  setInterval(snapshot, 250).unref();
  process.on("exit", snapshot);
  snapshot();
}
