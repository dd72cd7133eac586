/**
 * Telegram throughput: Gatehouse (`node bin/gatehouse.js start`, a child process) against a bare bot
 * written straight on grammY + openai (bench/baseline/bare-telegram-bot.ts, also a child), both
 * driven by the same emulators in this process (Telegram Bot API, OpenAI-compatible model that
 * calls current_time and then answers). Every chat is a private chat sending "what time is it"
 * three times; all messages are injected at once.
 *
 * Scenarios: 50 and 200 chats, with the emulator's per-chat limit (a burst of 3 sends per chat per
 * second, 429 + retry_after beyond; BENCH_PER_CHAT_BURST=1 makes it strictly one a second) and
 * without it. Per scenario, rounds alternate Gatehouse / bare,
 * each with a fresh process and fresh emulators; each fresh process first answers
 * BENCH_WARM_MESSAGES (30) messages from other chats, not counted, so that CPU, throughput and
 * latency are those of a running bot rather than of its JIT warm-up; a warm-up round of each bot (which also reads off
 * which Bot API calls Gatehouse makes per message, for the bare bot to make the same) is not
 * counted. Figures are medians over the rounds; lost / duplicated / unretried are totals.
 *
 * Run: `npm run bench -- telegram-throughput` (or `node bench/telegram-throughput.bench.ts`).
 * Knobs: BENCH_ROUNDS (default 5: a round without the limit lasts about a second, and five make a
 * steadier median than three), BENCH_BUDGET_S (default 225; rounds run breadth first — one pair per scenario, then the next — and stop when the budget is used; a Gatehouse round that
 * would overrun its share is cut and its missing answers count as lost), BENCH_SCENARIOS
 * (e.g. "50-limit,200-nolimit"), BENCH_PER_CHAT_BURST (sends per chat per second when limited),
 * BENCH_WARM_MESSAGES (0 measures cold processes), BENCH_BARE_REQUESTS ("own", the default: the
 * bare bot asks the model its own short request, one tool and no history, not streamed; "gatehouse":
 * it asks what Gatehouse asked in its warm-up — the same system prompt and tool specs, streamed as
 * Gatehouse streams, with the chat's history — so that the model server has the same work for both
 * and what is left between them is the bots' own).
 * Exit code 0 whatever the figures; 1 only when the bench itself broke.
 */
import { planFromCalls, type BareBotPlan, type BotKind } from "./support/bots.ts";
import { enforcedBurst, TIME_TEXT, type LimitMode } from "./support/emulators.ts";
import { injectAndWait } from "./support/load.ts";
import { cleanupAll } from "./support/processes.ts";
import { describeRound, runRound, type RoundResult } from "./support/round.ts";
import { fmt, median, ratio, renderTable, sum } from "./support/stats.ts";

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const BUDGET_MS = Math.max(30, Number(process.env.BENCH_BUDGET_S ?? 225)) * 1000;
const MESSAGES_PER_CHAT = 3;
/** What the bare bot asks the model: "own" (its short request) or "gatehouse" (the same requests as Gatehouse). */
const BARE_REQUESTS = process.env.BENCH_BARE_REQUESTS ?? "own";
if (BARE_REQUESTS !== "own" && BARE_REQUESTS !== "gatehouse") throw new Error(`BENCH_BARE_REQUESTS must be "own" or "gatehouse", not ${JSON.stringify(BARE_REQUESTS)}`);

interface Scenario {
  id: string;
  chats: number;
  mode: LimitMode;
  label: string;
}

const limit = `per-chat limit ${enforcedBurst()}/s`;
const ALL: Scenario[] = [
  { id: "50-limit", chats: 50, mode: "enforced", label: `50 chats, ${limit}` },
  { id: "50-nolimit", chats: 50, mode: "unlimited", label: "50 chats, no limit" },
  { id: "200-limit", chats: 200, mode: "enforced", label: `200 chats, ${limit}` },
  { id: "200-nolimit", chats: 200, mode: "unlimited", label: "200 chats, no limit" },
];
const wanted = process.env.BENCH_SCENARIOS?.split(",").map((s) => s.trim()).filter(Boolean);
const scenarios = wanted ? ALL.filter((s) => wanted.includes(s.id)) : ALL;
if (scenarios.length === 0) throw new Error(`BENCH_SCENARIOS matched nothing; known: ${ALL.map((s) => s.id).join(", ")}`);

const out = (line = "") => process.stdout.write(`${line}\n`);
const startedAt = Date.now();
const elapsed = () => Date.now() - startedAt;

// Whatever happens, the bench stops by itself: a hard limit well past the budget.
const watchdog = setTimeout(() => {
  process.stderr.write(`telegram-throughput: still running ${Math.round(elapsed() / 1000)} s after start; giving up\n`);
  cleanupAll();
  process.exit(1);
}, BUDGET_MS + 180_000);
watchdog.unref();

const FIRST_USER = 100_000;
const WARM_USER = 900_000;
// Each round's fresh process first answers this many messages from other chats (both bots alike),
// so that a round measures a running bot rather than its first seconds of JIT compilation.
const WARM_MESSAGES = Math.max(0, Number(process.env.BENCH_WARM_MESSAGES ?? 30));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function round(kind: BotKind, scenario: Scenario, plan: BareBotPlan, capMs: number, chats = scenario.chats, perChat = MESSAGES_PER_CHAT): Promise<RoundResult> {
  return runRound({
    kind,
    mode: scenario.mode,
    plan,
    load: { chats, perChat, text: TIME_TEXT, firstUserId: FIRST_USER },
    idleMs: 15_000,
    capMs,
    prepare: WARM_MESSAGES === 0 ? undefined : async ({ telegram, model }) => {
      const warm = await injectAndWait(telegram, model, { chats: WARM_MESSAGES, perChat: 1, text: TIME_TEXT, firstUserId: WARM_USER });
      // The per-chat windows of the warm-up chats have nothing to do with the load's; a pause keeps any other window apart too.
      await sleep(1_100);
      return `warmed up with ${warm.answered}/${warm.messages}`;
    },
  });
}

// ---- warm-up (not counted); Gatehouse's calls for one message tell the bare bot what to do
out(`rounds: ${ROUNDS} per bot per scenario, time budget ${BUDGET_MS / 1000} s, ${MESSAGES_PER_CHAT} messages per chat`);
const warmScenario = ALL[1]!;
const warmGatehouse = await round("gatehouse", warmScenario, { typing: true, progress: "lines" }, 30_000, 1, 1);
out(`warm-up   ${describeRound(warmGatehouse)}`);
let plan: BareBotPlan = { typing: true, progress: "lines" };
if (warmGatehouse.ok && warmGatehouse.answered === 1) {
  plan = planFromCalls(warmGatehouse.firstChatCalls);
  out(`Gatehouse's calls for one message: ${warmGatehouse.firstChatCalls.map((c) => `${c.method}${c.text ? ` "${c.text.slice(0, 40)}"` : ""}`).join(", ")}`);
} else {
  out(`Gatehouse did not answer the warm-up message; the bare bot makes the default calls`);
}
if (BARE_REQUESTS === "gatehouse") {
  const body = warmGatehouse.firstModelRequest;
  const system = (body?.messages as Array<{ role?: string; content?: unknown }> | undefined)?.find((m) => m.role === "system")?.content;
  if (typeof system !== "string" || !Array.isArray(body?.tools)) throw new Error("BENCH_BARE_REQUESTS=gatehouse: Gatehouse's first model request was not seen in the warm-up");
  plan.model = { system, tools: body.tools, stream: body.stream === true, history: true };
}
out(`bare bot plan: typing ${plan.typing ? "on" : "off"}, progress ${plan.progress}, model requests ${plan.model
  ? `as Gatehouse's (system prompt of ${plan.model.system.length} characters, ${plan.model.tools.length} tools, ${plan.model.stream ? "streamed" : "not streamed"}, the chat's history)`
  : "its own (one tool, no history, not streamed)"}`);
const warmBare = await round("bare", warmScenario, plan, 30_000, 5, 1);
out(`warm-up   ${describeRound(warmBare)}`);
if (!warmBare.ok || warmBare.lost > 0) throw new Error(`the bare bot did not answer its warm-up messages: ${describeRound(warmBare)}`);

// ---- measured rounds: breadth first (one pair of every scenario, then a second pair, …), so that a
// slow bot still gets every scenario measured within the budget; a Gatehouse round is cut at the
// time its scenario can have (its missing answers then count as lost, and the note says so).
const MAX_ROUND_MS = 100_000;
const MIN_ROUND_MS = 20_000;
const results = new Map<string, { gatehouse: RoundResult[]; bare: RoundResult[]; pairMs: number[]; budgetCut: boolean; gatehouseStartFailures: number }>();
for (const scenario of scenarios) results.set(scenario.id, { gatehouse: [], bare: [], pairMs: [], budgetCut: false, gatehouseStartFailures: 0 });
for (let pass = 0; pass < ROUNDS; pass++) {
  for (const [index, scenario] of scenarios.entries()) {
    const entry = results.get(scenario.id)!;
    const left = BUDGET_MS - elapsed();
    let capMs = MAX_ROUND_MS;
    if (pass === 0) {
      // What this scenario may use so that the ones after it still get their first pair.
      const share = left / (scenarios.length - index);
      capMs = Math.min(MAX_ROUND_MS, Math.max(MIN_ROUND_MS, share - 10_000));
    } else {
      const estimate = entry.pairMs.reduce((a, b) => a + b, 0) / Math.max(1, entry.pairMs.length);
      if (estimate > left) {
        entry.budgetCut = true;
        continue;
      }
      capMs = Math.min(MAX_ROUND_MS, Math.max(MIN_ROUND_MS, left - 5_000));
    }
    out(`\n${scenario.label} × ${MESSAGES_PER_CHAT} messages, round ${pass + 1} (Gatehouse cut at ${Math.round(capMs / 1000)} s)`);
    const pairStart = Date.now();
    const order: BotKind[] = pass % 2 === 0 ? ["gatehouse", "bare"] : ["bare", "gatehouse"];
    for (const kind of order) {
      if (kind === "gatehouse" && entry.gatehouseStartFailures >= 2) continue;
      const result = await round(kind, scenario, plan, capMs);
      if (kind === "gatehouse" && !result.ok) entry.gatehouseStartFailures++;
      entry[kind].push(result);
      out(`  ${describeRound(result)}`);
    }
    entry.pairMs.push(Date.now() - pairStart);
  }
}

// ---- report
type Pick = (r: RoundResult) => number;
const med = (rs: RoundResult[], pick: Pick) => median(rs.filter((r) => r.ok).map(pick));
const total = (rs: RoundResult[], pick: Pick) => (rs.length ? sum(rs.map(pick)) : Number.NaN);
const verdict = (pass: boolean | undefined) => (pass === undefined ? "" : pass ? "PASS" : "FAIL");

const rows: string[][] = [];
for (const scenario of scenarios) {
  const { gatehouse: g, bare: b, budgetCut } = results.get(scenario.id)!;
  const gOk = g.filter((r) => r.ok).length;
  const metric = (name: string, pick: Pick, target: { atLeast?: number; atMost?: number } | undefined, digits?: number) => {
    const gv = med(g, pick);
    const bv = med(b, pick);
    const q = ratio(gv, bv);
    const pass = target && gOk > 0 ? (target.atLeast !== undefined ? q >= target.atLeast : q <= target.atMost!) : target ? false : undefined;
    const t = target ? (target.atLeast !== undefined ? `≥ ${target.atLeast}× bare` : `≤ ${target.atMost}× bare`) : "";
    rows.push([scenario.label, name, fmt(gv, digits), fmt(bv, digits), Number.isFinite(q) ? `${q.toFixed(2)}×` : "n/a", t, verdict(target ? pass : undefined)]);
  };
  const count = (name: string, pick: Pick, mustBeZero: boolean) => {
    const gv = total(g, pick);
    const bv = total(b, pick);
    rows.push([scenario.label, name, fmt(gv, 0), fmt(bv, 0), "", mustBeZero ? "0" : "", mustBeZero ? verdict(gv === 0 && gOk === g.length) : ""]);
  };
  metric("answers/s", (r) => r.throughput, { atLeast: 0.9 });
  metric("p50 latency (ms)", (r) => r.p50, undefined, 0);
  metric("p99 latency (ms)", (r) => r.p99, { atMost: 1.2 }, 0);
  count("lost answers (all rounds)", (r) => r.lost, true);
  count("duplicated answers", (r) => r.duplicates, true);
  count("unretried 429s", (r) => r.unretried429, true);
  count("429s received", (r) => r.total429, false);
  metric("CPU ms / message", (r) => r.cpuPerMessage, { atMost: 1.5 });
  metric("emulators' CPU ms / message", (r) => r.emulatorCpuPerMessage, undefined, 2);
  metric("RSS at end (MB)", (r) => r.rssMb, scenario.chats >= 200 ? { atMost: 1.2 } : undefined, 0);
  rows.push([scenario.label, "rounds", `${gOk}${g.length > gOk ? ` (+${g.length - gOk} failed)` : ""}`, String(b.length), "", `${ROUNDS}`, budgetCut ? "(time budget)" : ""]);
}
out(`\nTelegram throughput: Gatehouse vs bare grammY + openai${BARE_REQUESTS === "gatehouse" ? " asking the model what Gatehouse asks" : ""} (medians; counts are totals over the rounds)`);
out(renderTable(["scenario", "metric", "Gatehouse", "bare", "ratio", "target", "verdict"], rows));

// ---- what looked odd
const notes: string[] = [];
const logs = new Map<string, number>();
for (const { gatehouse } of results.values()) {
  for (const r of gatehouse) {
    if (!r.ok) notes.push(`a Gatehouse round failed: ${(r.error ?? "").split("\n").slice(0, 4).join(" | ")}`);
    else if (r.end === "cap") notes.push(`a Gatehouse round was cut after ${Math.round(r.elapsedMs / 1000)} s (time budget) with ${r.lost} of ${r.messages} answers still missing: counted as lost (timeout), the bot was still working`);
    else if (r.end === "exited") notes.push(`Gatehouse exited during a round with ${r.lost} of ${r.messages} answers missing`);
    else if (r.end === "idle") notes.push(`a Gatehouse round stalled (no Bot API or model call for 15 s) with ${r.lost} of ${r.messages} answers missing`);
    for (const e of r.unretriedExamples) notes.push(`unretried 429: ${e}`);
    for (const [k, n] of r.logs) logs.set(k, (logs.get(k) ?? 0) + n);
  }
}
for (const { bare } of results.values()) for (const r of bare) if (r.lost > 0 || r.duplicates > 0) notes.push(`the bare bot lost ${r.lost} / duplicated ${r.duplicates} answers in a round`);
if (notes.length) {
  out(`\nnotes:`);
  for (const n of [...new Set(notes)].slice(0, 15)) out(`  - ${n}`);
}
const texts = new Map<string, number>();
let gatehouseMessages = 0;
for (const { gatehouse } of results.values()) {
  for (const r of gatehouse) {
    gatehouseMessages += r.ok ? r.messages : 0;
    for (const [k, n] of r.sentTexts) texts.set(k, (texts.get(k) ?? 0) + n);
  }
}
if (texts.size) {
  out(`\nwhat Gatehouse sent (sendMessage texts, digits as N; per injected message):`);
  for (const [k, n] of [...texts].sort((a, b) => b[1] - a[1]).slice(0, 8)) out(`  ${(n / Math.max(1, gatehouseMessages)).toFixed(2).padStart(6)} × ${JSON.stringify(k)}`);
}
if (logs.size) {
  out(`\nGatehouse warnings and errors (all measured rounds):`);
  for (const [k, n] of [...logs].sort((a, b) => b[1] - a[1]).slice(0, 10)) out(`  ${String(n).padStart(6)} × ${k}`);
}
out(`\ntotal time ${Math.round(elapsed() / 1000)} s`);
clearTimeout(watchdog);
cleanupAll();
