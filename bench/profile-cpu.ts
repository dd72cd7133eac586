/**
 * Where Gatehouse's CPU per message goes (a diagnostic, not a `*.bench.ts`: `npm run bench` does
 * not run it). Starts Gatehouse as bench/support/bots.ts does (`node bin/gatehouse.js start`, Telegram
 * and OpenAI emulators, no per-chat limit unless asked) with the probe of bench/support/probe-preload.ts loaded,
 * warms it up, then profiles one load (default 200 chats × 3 "what time is it") and prints:
 *   - CPU ms per message (from /proc, with and without the profiler running: see BENCH_PROFILE=0),
 *   - per message: SQLite statements (writes, reads, transactions; by statement), log lines
 *     written to data/logs/gatehouse.log, Bot API calls by method, model requests;
 *   - self time by package, file and function (top 40) and inclusive time of functions.
 * The same for the bare bot (bench/baseline/bare-telegram-bot.ts) unless BENCH_PROFILE_BOTS says otherwise.
 *
 * Run: `node bench/profile-cpu.ts`. Knobs: BENCH_CHATS (200), BENCH_PER_CHAT (3), BENCH_LIMIT (unlimited;
 * "enforced" puts Telegram's per-chat limit on, as in the throughput bench), BENCH_LOG_LEVEL
 * (info, the default level, as the throughput bench), BENCH_PROFILE_BOTS (gatehouse,bare),
 * BENCH_PROFILE (1; 0 = counts and CPU only), BENCH_PROF_DIR (/tmp/prof: the .cpuprofile files stay
 * there), BENCH_TOP (40), BENCH_GATEHOUSE_ENV (extra env for Gatehouse, "K=V,K=V").
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { startBareBot, startGatehouse, type BotKind, type StartedBot } from "./support/bots.ts";
import { startEmulators, TIME_TEXT } from "./support/emulators.ts";
import { countCalls, injectAndWait, injectPrivateMessages, RoundWatcher, summarizeAnswers, waitForAnswers } from "./support/load.ts";
import { cleanupAll, makeTempDir } from "./support/processes.ts";
import { probeEnv, probeSignal, sqliteDelta } from "./support/probe.ts";
import { groupTimes, readProfile, renderSummary, summarizeProfile } from "./support/cpuprofile.ts";
import { renderTable } from "./support/stats.ts";

const CHATS = Number(process.env.BENCH_CHATS ?? 200);
const LIMIT = process.env.BENCH_LIMIT === "enforced" ? "enforced" : "unlimited";
const PER_CHAT = Number(process.env.BENCH_PER_CHAT ?? 3);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? "info";
const BOTS = (process.env.BENCH_PROFILE_BOTS ?? "gatehouse,bare").split(",").map((s) => s.trim()) as BotKind[];
const PROFILE = process.env.BENCH_PROFILE !== "0";
const PROF_DIR = process.env.BENCH_PROF_DIR ?? "/tmp/prof";
const TOP = Number(process.env.BENCH_TOP ?? 40);
const EXTRA_ENV = Object.fromEntries((process.env.BENCH_GATEHOUSE_ENV ?? "").split(",").filter((s) => s.includes("=")).map((s) => [s.slice(0, s.indexOf("=")), s.slice(s.indexOf("=") + 1)]));

const out = (line = "") => process.stdout.write(`${line}\n`);
const watchdog = setTimeout(() => {
  process.stderr.write("profile-cpu: giving up after 170 s\n");
  cleanupAll();
  process.exit(1);
}, 170_000);
watchdog.unref();

function logLines(bot: StartedBot): number {
  const file = path.join(bot.process.dir, "data", "logs", "gatehouse.log");
  if (!existsSync(file)) return 0;
  return readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).length;
}

function logKinds(bot: StartedBot, skip: number): Array<[string, number]> {
  const file = path.join(bot.process.dir, "data", "logs", "gatehouse.log");
  if (!existsSync(file)) return [];
  const counts = new Map<string, number>();
  for (const line of readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).slice(skip)) {
    let k = line.slice(0, 60);
    try {
      const e = JSON.parse(line) as { msg?: string; level?: number };
      k = `${e.level} ${e.msg}`;
    } catch {
      // not JSON
    }
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]);
}

/** Where Gatehouse's time goes, by the parts the report names (patterns over "<function> <file>:<line>"). */
const HOTSPOTS: Record<string, RegExp> = {
  "engine turn (advance, all of it)": /^advance src\/engine\/turn\.ts/,
  "tool specs per request (toolSpecOf → zod toJSONSchema)": /^toolSpecOf src\/tools\/registry\.ts/,
  "availability (policy + specs)": /^computeAvailability src\/engine\/availability\.ts/,
  // Async code: a frame is on the stack only while its own synchronous part runs (its continuations
  // resume under it, what it awaits does not), so these are lower bounds.
  "model client (openai-client: request, stream loop, assembly)": /^(complete|attempt|streamed|whole|finish) src\/model\/openai-client\.ts/,
  "  of which: stream chunks (SDK SSE iterator + zod chunk parse + assembler)": /^(iterator|iterSSEChunks|_iterSSEMessages) node_modules\/openai\/core\/streaming|^push src\/model\/stream-assembler/,
  "prompt fitting (fit-prompt, token counting, compaction gauge write)": /^\S+ src\/engine\/(fit-prompt|context-budget|compaction)\.ts/,
  "zod parse (any)": /^(_?parse|safeParse|inst\._zod\.parse) node_modules\/zod/,
  "SQLite store (any store method)": /^\S+ src\/store\/sqlite-store\.ts/,
  "  of which: turn checkpoints (save → saveTurn, encodeTurnRecord)": /^save src\/engine\/turn\.ts/,
  "logging (pino write + redaction + scrub + file/stdout)": /^(LOG node_modules\/pino|write src\/observe\/logger\.ts)/,
  "pino child loggers": /^child node_modules\/pino\/lib\/proto\.js/,
  "observer.emit (incl. its logging)": /^emit src\/observe\/observer\.ts/,
  "secret scrubbing (scrubSecrets, anywhere)": /^scrubSecrets src\/observe\/scrub\.ts/,
  "current_time tool (Intl.DateTimeFormat per call)": /^execute src\/tools\/builtin\/current-time\.ts/,
  "telegram outbound port (incl. grammY + HTTP)": /^\S+ adapters\/telegram\/outbound\.ts/,
  "telegram inbound (polling, parse, dispatch)": /^\S+ adapters\/telegram\/(polling|inbound|index)\.ts/,
  "delivery queues (incl. port calls)": /^\S+ src\/delivery\//,
  "typing indicator": /^\S+ src\/delivery\/typing\.ts/,
  "gateway accept (dedupe, access, lanes)": /^accept src\/gateway\/gateway\.ts/,
  "garbage collector": /^\(garbage collector\)/,
  "SQLite statements (native run/get/all/exec)": /^(run|get|all|iterate|exec) :0$/,
};

mkdirSync(PROF_DIR, { recursive: true });
const messages = CHATS * PER_CHAT;
for (const kind of BOTS) {
  const emulators = await startEmulators(LIMIT);
  const { telegram, model } = emulators;
  const probeDir = makeTempDir(`gh-bench-probe-${kind}-`);
  const probeOut = path.join(probeDir, "probe.json");
  const env = probeEnv(probeOut, PROFILE ? { profileDir: PROF_DIR } : {});
  let bot: StartedBot | undefined;
  try {
    bot = kind === "gatehouse"
      ? await startGatehouse(telegram, model, { extraEnv: { ...env, ...EXTRA_ENV }, logLevel: LOG_LEVEL })
      : await startBareBot(telegram, model, { typing: true, progress: "lines" }, 30_000, env);
    // Warm-up: JIT, connection pools, the store's first pages.
    const warm = await injectAndWait(telegram, model, { chats: 20, perChat: 1, text: TIME_TEXT, firstUserId: 900_000 }, { capMs: 30_000 });
    await new Promise((r) => setTimeout(r, 1500));
    const s0 = await probeSignal(bot.process, probeOut);
    const cpu0 = bot.process.cpuMs();
    const lines0 = logLines(bot);
    const call0 = telegram.calls.length;
    const req0 = model.requests.length;
    const watcher = new RoundWatcher(telegram, model);
    const since = Date.now();
    const injected = injectPrivateMessages(telegram, { chats: CHATS, perChat: PER_CHAT, text: TIME_TEXT, firstUserId: 100_000 });
    const end = await waitForAnswers(watcher, injected, { idleMs: 15_000, capMs: 100_000, since });
    const elapsed = Date.now() - since;
    // Let trailing sends and typing refreshes settle (they are the load's work too).
    await new Promise((r) => setTimeout(r, 500));
    const cpu1 = bot.process.cpuMs();
    const s1 = await probeSignal(bot.process, probeOut);
    watcher.scan();
    const answers = summarizeAnswers(injected, watcher.answers);
    const lines1 = logLines(bot);
    const calls = countCalls(telegram.calls, call0);
    const modelRequests = model.requests.length - req0;
    const sql = sqliteDelta(s0, s1);
    const per = (n: number) => (n / messages).toFixed(2);

    out(`\n==== ${kind}: ${CHATS} chats × ${PER_CHAT} messages (log level ${kind === "gatehouse" ? LOG_LEVEL : "n/a"}, profiler ${PROFILE ? "on" : "off"})`);
    out(`warm-up: ${warm.answered}/${warm.messages} answered (${warm.end}); load: ${answers.answered}/${answers.messages} answered in ${(elapsed / 1000).toFixed(1)} s (${end})`);
    const apiCalls = Object.values(calls).reduce((a, b) => a + b, 0);
    const rows: string[][] = [
      ["CPU ms (process, /proc)", (cpu1 - cpu0).toFixed(0), ((cpu1 - cpu0) / messages).toFixed(2)],
      ["SQLite writes (INSERT/UPDATE/DELETE)", String(sql.writes), per(sql.writes)],
      ["SQLite reads (SELECT)", String(sql.reads), per(sql.reads)],
      ["SQLite BEGIN/COMMIT", String(sql.tx), per(sql.tx)],
      ["log lines (data/logs/gatehouse.log)", String(lines1 - lines0), per(lines1 - lines0)],
      ["Bot API calls (all but getUpdates)", String(apiCalls), per(apiCalls)],
      ...Object.entries(calls).map(([m, n]) => [`  ${m}`, String(n), per(n)]),
      ["model requests", String(modelRequests), per(modelRequests)],
      ["heapUsed after load + GC (MB)", s1 ? (s1.memory.heapUsed / 1e6).toFixed(1) : "n/a", ""],
      ["RSS after load + GC (MB)", s1 ? (s1.memory.rss / 1e6).toFixed(1) : "n/a", ""],
    ];
    out(renderTable(["what", "total", "per message"], rows));
    if (sql.byStatement.length) {
      out(`\nSQLite statements during the load:`);
      out(renderTable(["per msg", "statement"], sql.byStatement.map(([k, n]) => [per(n), k])));
    }
    if (kind === "gatehouse" && lines1 > lines0) {
      out(`\nlog lines during the load (level msg):`);
      for (const [k, n] of logKinds(bot, lines0).slice(0, 15)) out(`  ${per(n)} × ${k}`);
    }
    const profile = s1?.profiles.at(-1);
    if (PROFILE && profile) {
      out(`\nprofile: ${profile}`);
      const groups = groupTimes(readProfile(profile), HOTSPOTS);
      out(`\nhotspot groups (inclusive: a sample counts when the group's code is anywhere on the stack; groups overlap)`);
      out(renderTable(["group", "ms", "ms/msg"], groups.map((g) => [g.key, g.ms.toFixed(0), (g.ms / messages).toFixed(3)])));
      const summary = summarizeProfile(readProfile(profile));
      const probeSelf = summary.byFile.find((f) => f.key === "bench/support/probe-preload.ts")?.selfMs ?? 0;
      out(`(the bench's own probe — statement counting, snapshots — took ${probeSelf.toFixed(0)} ms of self time, ${(probeSelf / messages).toFixed(3)} ms/msg)`);
      out(renderSummary(summarizeProfile(readProfile(profile)), { top: TOP, perMessage: messages, inclusiveFilter: (k) => !k.startsWith("(") }));
    } else if (PROFILE) out("no profile was written");
  } finally {
    if (bot) await bot.process.stop(5000);
    await emulators.close();
  }
}
clearTimeout(watchdog);
cleanupAll();
