/**
 * Memory per session: Gatehouse (`node bin/gatehouse.js start`, a child process, as bench/support/bots.ts
 * starts it) against the Telegram emulator and the bench model (every "what time is it" gets one
 * current_time call, then the answer). Distinct private chats each have one turn, sent in waves
 * (WAVE chats at once, every answer awaited before the next wave):
 *   - RSS after 100 sessions, and after 10,000: the growth should stay within 50 MB;
 *   - RSS after 200 sessions, against the bare grammY + openai bot (bench/baseline) after the same
 *     100 + 100 chats: the ratio of the medians over MEMORY_ROUNDS fresh processes of each (the long
 *     Gatehouse run's 200 reading is its first; the others alternate which bot goes first) should
 *     stay within 1.2×.
 * Each reading is taken twice: VmRSS from /proc after a quiet period (QUIET_MS with no load), and
 * VmRSS after a memory-reducing full GC forced inside the process by the probe
 * (bench/support/probe-preload.ts, loaded with NODE_OPTIONS; it also reports heapUsed/heapTotal).
 * Why both: after a burst V8 keeps the heap it grew to (hundreds of MB committed, a fraction used)
 * until its memory reducer runs some 10 s later; the after-GC reading is what the process holds once
 * that happened, and the verdicts use it. Between readings the probe's snapshots give the peak heap
 * during the load. `sessionsSeen` from the bot's status snapshot confirms the sessions were distinct.
 *
 * Run: `npm run bench -- sessions-memory` (or `node bench/sessions-memory.bench.ts`).
 * Knobs: BENCH_SESSIONS (10000), BENCH_WAVE (500), BENCH_QUIET_MS (3000), BENCH_LOAD_BUDGET_S (150:
 * the waves stop when it is used; the growth is then given for the sessions reached, and FAILs),
 * BENCH_LOG_LEVEL (info, the default level, as the throughput bench), BENCH_BARE_SESSIONS (200; more drives the bare
 * bot on, for its own growth over the same waves), BENCH_MEMORY_ROUNDS (3: processes of each bot read at 200 sessions), BENCH_GATEHOUSE_ENV ("K=V,K=V" for Gatehouse, e.g.
 * MALLOC_ARENA_MAX=2). Exit code 0 whatever the figures; 1 when the bench itself broke.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { startBareBot, startGatehouse, type BotKind, type StartedBot } from "./support/bots.ts";
import { startEmulators, TIME_TEXT, type OpenAIEmulator, type TelegramEmulator } from "./support/emulators.ts";
import { injectAndWait } from "./support/load.ts";
import { cleanupAll, makeTempDir } from "./support/processes.ts";
import { probeEnv, probeSignal, readProbe } from "./support/probe.ts";
import { fmt, median, renderTable } from "./support/stats.ts";
import { readRuntimeStatus } from "../src/observe/runtime-status.ts";

const TOTAL = Math.max(200, Number(process.env.BENCH_SESSIONS ?? 10_000));
const WAVE = Math.max(1, Number(process.env.BENCH_WAVE ?? 500));
const QUIET_MS = Math.max(0, Number(process.env.BENCH_QUIET_MS ?? 3000));
const LOAD_BUDGET_MS = Math.max(20, Number(process.env.BENCH_LOAD_BUDGET_S ?? 150)) * 1000;
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? "info";
const BARE_TOTAL = Number(process.env.BENCH_BARE_SESSIONS ?? 200);
const MEMORY_ROUNDS = Math.max(1, Number(process.env.BENCH_MEMORY_ROUNDS ?? 3));
const EXTRA_ENV = Object.fromEntries((process.env.BENCH_GATEHOUSE_ENV ?? "").split(",").filter((kv) => kv.includes("=")).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
const GROWTH_TARGET_MB = 50;
const RATIO_TARGET = 1.2;
const FIRST_USER = 200_000;

const out = (line = "") => process.stdout.write(`${line}\n`);
const startedAt = Date.now();
const watchdog = setTimeout(() => {
  process.stderr.write(`sessions-memory: still running after ${Math.round((Date.now() - startedAt) / 1000)} s; giving up\n`);
  cleanupAll();
  process.exit(1);
}, LOAD_BUDGET_MS + 120_000 + (MEMORY_ROUNDS - 1) * 60_000);
watchdog.unref();

interface Reading {
  sessions: number;
  /** VmRSS after the quiet period, before any forced GC (MB). */
  rssQuiet: number;
  /** VmRSS right after a forced full GC (MB); NaN when the probe did not answer. */
  rssGc: number;
  heapUsedGc: number;
  /** V8's committed heap after the GC (MB): what a burst grew it to and it has not handed back yet. */
  heapTotalGc: number;
  /** After the GC: anonymous memory (heap, malloc), file-backed pages (mapped code, files), shared memory (MB). */
  rssAnon: number;
  rssFile: number;
  rssShmem: number;
  externalGc: number;
  at: number;
}

function rssParts(pid: number): { anon: number; file: number; shmem: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN) / 1024;
    return { anon: kb("RssAnon"), file: kb("RssFile"), shmem: kb("RssShmem") };
  } catch {
    return { anon: Number.NaN, file: Number.NaN, shmem: Number.NaN };
  }
}

const MB = 1024 * 1024;

async function read(bot: StartedBot, probeOut: string, sessions: number): Promise<Reading> {
  await new Promise((r) => setTimeout(r, QUIET_MS));
  const rssQuiet = bot.process.memoryMb().rss;
  const snap = await probeSignal(bot.process, probeOut);
  // Measured from outside too, a moment after the GC (what /proc says is what the machine pays).
  await new Promise((r) => setTimeout(r, 200));
  const rssGc = snap ? bot.process.memoryMb().rss : Number.NaN;
  const parts = rssParts(bot.process.pid);
  return {
    sessions, rssQuiet, rssGc, heapUsedGc: snap ? snap.memory.heapUsed / MB : Number.NaN, heapTotalGc: snap ? snap.memory.heapTotal / MB : Number.NaN,
    rssAnon: parts.anon, rssFile: parts.file, rssShmem: parts.shmem, externalGc: snap ? (snap.memory.external + snap.memory.arrayBuffers) / MB : Number.NaN,
    at: Date.now(),
  };
}

/** One turn in each of `count` new chats, `wave` at a time; returns how many were answered. */
async function waves(telegram: TelegramEmulator, model: OpenAIEmulator, first: number, count: number, wave: number, deadline: number): Promise<{ sent: number; answered: number; lostNote?: string }> {
  let sent = 0;
  let answered = 0;
  let lostNote: string | undefined;
  while (sent < count && Date.now() < deadline) {
    const n = Math.min(wave, count - sent);
    const result = await injectAndWait(telegram, model, { chats: n, perChat: 1, text: TIME_TEXT, firstUserId: first + sent }, { idleMs: 15_000, capMs: Math.max(5_000, deadline - Date.now() + 30_000) });
    sent += n;
    answered += result.answered;
    if (result.lost > 0) lostNote = `${result.lost} of ${n} unanswered in a wave (end: ${result.end})`;
  }
  return { sent, answered, lostNote };
}

const readings = new Map<string, Reading>();
const notes: string[] = [];

/** Follows the probe's snapshots (every 250 ms) while a load runs: the highest heap and RSS seen. */
function peakSampler(probeOut: string) {
  const peak = { heapUsed: 0, heapTotal: 0, rss: 0 };
  const timer = setInterval(() => {
    const m = readProbe(probeOut)?.memory;
    if (!m) return;
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed / MB);
    peak.heapTotal = Math.max(peak.heapTotal, m.heapTotal / MB);
    peak.rss = Math.max(peak.rss, m.rss / MB);
  }, 100);
  return { peak, stop: () => clearInterval(timer) };
}

/**
 * Runs one bot through the marks (sessions so far → reading label): one turn in each new chat,
 * waves of at most WAVE, a reading at each mark. Stops early when the budget is used.
 */
async function drive(kind: BotKind, marks: Array<[number, string]>, budgetMs: number, showStatus = true): Promise<void> {
  const emulators = await startEmulators("unlimited");
  const { telegram, model } = emulators;
  const probeOut = path.join(makeTempDir("gh-bench-probe-"), "probe.json");
  const env = { ...probeEnv(probeOut), ...(kind === "gatehouse" ? EXTRA_ENV : {}) };
  let bot: StartedBot | undefined;
  try {
    bot = kind === "gatehouse"
      ? await startGatehouse(telegram, model, { extraEnv: env, logLevel: LOG_LEVEL })
      : await startBareBot(telegram, model, { typing: true, progress: "lines" }, 30_000, env);
    const deadline = Date.now() + budgetMs;
    let done = 0;
    for (const [upTo, label] of marks) {
      if (Date.now() >= deadline) break;
      const cpu0 = bot.process.cpuMs();
      const t0 = Date.now();
      const before = done;
      const sampler = peakSampler(probeOut);
      const w = await waves(telegram, model, FIRST_USER + done, upTo - done, Math.min(WAVE, upTo - done), deadline);
      sampler.stop();
      done += w.sent;
      const loadS = (Date.now() - t0) / 1000;
      const cpuPerTurn = (bot.process.cpuMs() - cpu0) / Math.max(1, done - before);
      if (w.lostNote) notes.push(`${kind}: ${w.lostNote}`);
      if (w.answered < w.sent) notes.push(`${kind}: ${w.sent - w.answered} turns unanswered on the way to ${upTo} sessions`);
      const r = await read(bot, probeOut, done);
      readings.set(label, r);
      const elapsed = ((Date.now() - startedAt) / 1000).toFixed(0);
      out(
        `${kind.padEnd(9)} ${String(done).padStart(6)} sessions: rss ${fmt(r.rssQuiet, 1)} MB quiet, ${fmt(r.rssGc, 1)} MB after GC ` +
          `(anon ${fmt(r.rssAnon, 0)}, file ${fmt(r.rssFile, 0)}), heap ${fmt(r.heapUsedGc, 1)} used / ${fmt(r.heapTotalGc, 0)} MB committed, external ${fmt(r.externalGc, 1)} MB | ` +
          `during the last ${done - before} turns: peak heap ${fmt(sampler.peak.heapUsed, 0)} used / ${fmt(sampler.peak.heapTotal, 0)} committed, ` +
          `${((done - before) / loadS).toFixed(0)} turns/s, ${cpuPerTurn.toFixed(1)} ms CPU/turn (t=${elapsed} s)`,
      );
    }
    if (kind === "gatehouse" && showStatus) {
      // The snapshot is refreshed every 5 s: wait for one written after the last wave.
      const lastWave = [...readings.values()].at(-1)!.at - QUIET_MS;
      let status = readRuntimeStatus(path.join(bot.process.dir, "data"))?.snapshot;
      for (let i = 0; i < 60 && status && Date.parse(status.updatedAt) < lastWave; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = readRuntimeStatus(path.join(bot.process.dir, "data"))?.snapshot;
      }
      if (status) out(`status snapshot (${status.updatedAt}): sessionsSeen ${status.sessionsSeen}, runningTurns ${status.runningTurns}, pendingApprovals ${status.pendingApprovals}`);
    }
  } finally {
    if (bot) await bot.process.stop(5000);
    await emulators.close();
  }
}

// ---- Gatehouse: 100 sessions, 200, one full wave more (its burst's working set is then in), then on to
// TOTAL: steady growth from there is retention per session, a level line is caches at their cap.
const gatehouseMarks: Array<[number, string]> = [[100, "g100"], [200, "g200"]];
for (const mark of [200 + WAVE, 5000, TOTAL]) {
  if (mark > gatehouseMarks.at(-1)![0] && mark <= TOTAL) gatehouseMarks.push([mark, mark === TOTAL ? "gTotal" : mark === 200 + WAVE ? "gWave" : `g${mark}`]);
}
await drive("gatehouse", gatehouseMarks, LOAD_BUDGET_MS);
if (!readings.has("gTotal")) {
  const last = [...readings.values()].at(-1)!;
  readings.set("gTotal", last);
  notes.push(`the load budget (${LOAD_BUDGET_MS / 1000} s) ran out at ${last.sessions} sessions; growth is given up to there`);
}

// ---- the bare bot after the same 100 + 100 chats (and, with BENCH_BARE_SESSIONS, on to that many)
const bareMarks: Array<[number, string]> = [[100, "b100"], [200, "b200"]];
if (BARE_TOTAL > 200) bareMarks.push([BARE_TOTAL, "bTotal"]);
await drive("bare", bareMarks, BARE_TOTAL > 200 ? LOAD_BUDGET_MS : 60_000);

// ---- more fresh processes of each to 200 sessions, for the ratio's medians (alternating who goes first)
for (let r = 2; r <= MEMORY_ROUNDS; r++) {
  const order: BotKind[] = r % 2 === 0 ? ["bare", "gatehouse"] : ["gatehouse", "bare"];
  for (const kind of order) {
    const k = kind === "gatehouse" ? "g" : "b";
    await drive(kind, [[100, `${k}100#${r}`], [200, `${k}200#${r}`]], 60_000, false);
  }
}

// ---- report
const g100 = readings.get("g100")!;
/** The 200-session readings of every process of a bot. */
const at200 = (k: "g" | "b") => [...readings].filter(([label]) => label === `${k}200` || label.startsWith(`${k}200#`)).map(([, r]) => r);
const g200s = at200("g");
const b200s = at200("b");
const gTotal = readings.get("gTotal")!;
const gWave = readings.get("gWave");
const b100 = readings.get("b100");
const bTotal = readings.get("bTotal");
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");
const growthGc = gTotal.rssGc - g100.rssGc;
const growthQuiet = gTotal.rssQuiet - g100.rssQuiet;
const med200 = (rs: Reading[], pick: (r: Reading) => number) => median(rs.map(pick));
const g200Gc = med200(g200s, (r) => r.rssGc);
const b200Gc = med200(b200s, (r) => r.rssGc);
const g200Quiet = med200(g200s, (r) => r.rssQuiet);
const b200Quiet = med200(b200s, (r) => r.rssQuiet);
const g200Heap = med200(g200s, (r) => r.heapUsedGc);
const b200Heap = med200(b200s, (r) => r.heapUsedGc);
const ratioGc = g200Gc / b200Gc;
const ratioQuiet = g200Quiet / b200Quiet;
const each = (rs: Reading[], pick: (r: Reading) => number) => rs.map((r) => fmt(pick(r), 1)).join(", ");
const perSessionKb = ((gTotal.heapUsedGc - g100.heapUsedGc) * 1024) / Math.max(1, gTotal.sessions - g100.sessions);
const rows = [
  [`RSS growth, 100 → ${gTotal.sessions} sessions (after GC)`, `${fmt(growthGc, 1)} MB`, `${fmt(g100.rssGc, 1)} MB at 100`, "", `≤ ${GROWTH_TARGET_MB} MB`, verdict(growthGc <= GROWTH_TARGET_MB && gTotal.sessions >= TOTAL)],
  [`RSS growth, 100 → ${gTotal.sessions} sessions (quiet, no GC)`, `${fmt(growthQuiet, 1)} MB`, `${fmt(g100.rssQuiet, 1)} MB at 100`, "", `≤ ${GROWTH_TARGET_MB} MB`, ""],
  [`heapUsed growth, 100 → ${gTotal.sessions} (after GC)`, `${fmt(gTotal.heapUsedGc - g100.heapUsedGc, 1)} MB`, `${fmt(g100.heapUsedGc, 1)} MB at 100`, `${fmt(perSessionKb, 2)} KB/session`, "", ""],
  ...(gWave && gWave !== gTotal
    ? [[`RSS growth, ${gWave.sessions} → ${gTotal.sessions} sessions (after GC; first ${WAVE}-wave burst already in)`, `${fmt(gTotal.rssGc - gWave.rssGc, 1)} MB`, `${fmt(gWave.rssGc, 1)} MB at ${gWave.sessions}`, "", "", ""]]
    : []),
  [`V8 committed heap growth, 100 → ${gTotal.sessions} (after GC)`, `${fmt(gTotal.heapTotalGc - g100.heapTotalGc, 1)} MB`, `${fmt(g100.heapTotalGc, 1)} MB at 100`, "", "", ""],
  [`RSS at 200 sessions vs bare bot (after GC; median of ${g200s.length} and ${b200s.length} processes)`, `${fmt(g200Gc, 1)} MB`, `${fmt(b200Gc, 1)} MB`, `${fmt(ratioGc, 2)}×`, `≤ ${RATIO_TARGET}× bare`, verdict(ratioGc <= RATIO_TARGET)],
  ["RSS at 200 sessions vs bare bot (quiet, no GC)", `${fmt(g200Quiet, 1)} MB`, `${fmt(b200Quiet, 1)} MB`, `${fmt(ratioQuiet, 2)}×`, `≤ ${RATIO_TARGET}× bare`, ""],
  ...(bTotal && b100
    ? [[`bare bot: RSS growth, 100 → ${bTotal.sessions} sessions (after GC)`, `${fmt(bTotal.rssGc - b100.rssGc, 1)} MB`, `${fmt(b100.rssGc, 1)} MB at 100`, "", "", ""]]
    : []),
  ["heapUsed at 200 sessions vs bare bot (after GC)", `${fmt(g200Heap, 1)} MB`, `${fmt(b200Heap, 1)} MB`, `${fmt(g200Heap / b200Heap, 2)}×`, "", ""],
];
out(`\nSessions memory: Gatehouse, one turn in each of many private chats (waves of ${WAVE}, ${QUIET_MS} ms quiet before each reading)`);
out(renderTable(["metric", "Gatehouse", "baseline", "ratio", "target", "verdict"], rows));
if (g200s.length > 1 || b200s.length > 1) out(`RSS after GC at 200 sessions, each process: Gatehouse ${each(g200s, (r) => r.rssGc)} MB; bare ${each(b200s, (r) => r.rssGc)} MB`);
if (gTotal.sessions < TOTAL) notes.push(`the growth verdict needs ${TOTAL} sessions; only ${gTotal.sessions} were reached (FAIL by default)`);
if (notes.length) {
  out(`\nnotes:`);
  for (const n of [...new Set(notes)]) out(`  - ${n}`);
}
out(`\ntotal time ${Math.round((Date.now() - startedAt) / 1000)} s`);
clearTimeout(watchdog);
cleanupAll();
