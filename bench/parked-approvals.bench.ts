/**
 * Parked approvals: does a crowd of approval cards waiting for a click slow anyone else down?
 * Gatehouse only (`node bin/gatehouse.js start`, a child process), against the Telegram and model
 * emulators in this process. A round with cards first has 100 private chats ask to save a note
 * (the bench model calls `write_file`, which the default supervised mode sends for approval) and
 * waits until their cards are shown; nobody clicks. Then 100 other private chats send "what time
 * is it" all at once. The same load without the cards is the reference; rounds alternate, each
 * with a fresh process and fresh emulators (per-chat limit as the emulator has it, or
 * BENCH_PER_CHAT_BURST), a warm-up round
 * is not counted, and the figures are medians. In both variants the process first answers 10 other
 * chats, so that neither measures a cold process. Target: p99 with cards ≤ 1.2× p99 without.
 *
 * Run: `npm run bench -- parked-approvals` (or `node bench/parked-approvals.bench.ts`).
 * Knobs: BENCH_ROUNDS (default 3), BENCH_BUDGET_S (default 225), BENCH_PARKED_CARDS (100),
 * BENCH_PARKED_CHATS (100), BENCH_PARKED_MESSAGES (messages per time chat, default 1),
 * BENCH_PER_CHAT_BURST.
 * Exit code 0 whatever the figures; 1 only when the bench itself broke.
 */
import { parkCards } from "./support/cards.ts";
import { TIME_TEXT } from "./support/emulators.ts";
import { injectAndWait } from "./support/load.ts";
import { cleanupAll } from "./support/processes.ts";
import { describeRound, runRound, type RoundResult } from "./support/round.ts";
import { fmt, median, ratio, renderTable, sum } from "./support/stats.ts";

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const BUDGET_MS = Math.max(30, Number(process.env.BENCH_BUDGET_S ?? 225)) * 1000;
const CARDS = Math.max(1, Number(process.env.BENCH_PARKED_CARDS ?? 100));
const TIME_CHATS = Math.max(1, Number(process.env.BENCH_PARKED_CHATS ?? 100));
const PER_CHAT = Math.max(1, Number(process.env.BENCH_PARKED_MESSAGES ?? 1));
const TIME_USERS = 100_000;
const CARD_USERS = 200_000;
const WARM_USERS = 300_000;

const out = (line = "") => process.stdout.write(`${line}\n`);
const startedAt = Date.now();
const elapsed = () => Date.now() - startedAt;
const watchdog = setTimeout(() => {
  process.stderr.write(`parked-approvals: still running ${Math.round(elapsed() / 1000)} s after start; giving up\n`);
  cleanupAll();
  process.exit(1);
}, BUDGET_MS + 180_000);
watchdog.unref();

type Variant = "none" | "cards";

function round(variant: Variant, capMs: number, chats = TIME_CHATS): Promise<RoundResult> {
  return runRound({
    kind: "gatehouse",
    mode: "enforced",
    load: { chats, perChat: PER_CHAT, text: TIME_TEXT, firstUserId: TIME_USERS },
    idleMs: 15_000,
    capMs,
    // Both variants first answer a few other chats, so that neither measures a cold process (the
    // card requests would otherwise warm up only the card variant).
    prepare: async ({ telegram, model }) => {
      const warm = await injectAndWait(telegram, model, { chats: 10, perChat: 1, text: TIME_TEXT, firstUserId: WARM_USERS });
      const warmed = `warmed up with ${warm.answered}/${warm.messages}`;
      if (variant === "none") return warmed;
      const parked = await parkCards(telegram, { chats: CARDS, firstUserId: CARD_USERS });
      return `${parked.posted}/${parked.wanted} cards shown after ${(parked.ms / 1000).toFixed(1)} s, ${warmed}`;
    },
  });
}

out(`rounds: ${ROUNDS} per variant, time budget ${BUDGET_MS / 1000} s; ${TIME_CHATS} chats × ${PER_CHAT} "what time is it", with and without ${CARDS} cards waiting`);
const warm = await round("none", 30_000, 10);
out(`warm-up   ${describeRound(warm)}`);

const results: Record<Variant, RoundResult[]> = { none: [], cards: [] };
const pairMs: number[] = [];
let budgetCut = false;
for (let pass = 0; pass < ROUNDS; pass++) {
  const left = BUDGET_MS - elapsed();
  const estimate = pairMs.length ? sum(pairMs) / pairMs.length : 0;
  if (pass > 0 && estimate > left) {
    budgetCut = true;
    out(`(stopping after ${pass} round${pass > 1 ? "s" : ""}: time budget)`);
    break;
  }
  // The card phase takes up to 45 s of its own; a round gets what is left of its half.
  const capMs = Math.min(90_000, Math.max(20_000, pass === 0 ? left / 2 - 30_000 : left - 5_000));
  out(`\nround ${pass + 1} (cut at ${Math.round(capMs / 1000)} s)`);
  const t0 = Date.now();
  for (const variant of (pass % 2 === 0 ? ["none", "cards"] : ["cards", "none"]) as Variant[]) {
    const r = await round(variant, capMs);
    results[variant].push(r);
    out(`  ${variant === "cards" ? "cards" : "no cards"}: ${r.prepareNote ? `${r.prepareNote}; ` : ""}${describeRound(r)}`);
  }
  pairMs.push(Date.now() - t0);
}

type Pick = (r: RoundResult) => number;
const okOf = (rs: RoundResult[]) => rs.filter((r) => r.ok);
const med = (rs: RoundResult[], pick: Pick) => median(okOf(rs).map(pick));
const cardsShown = (r: RoundResult) => Number(/^(\d+)\//.exec(r.prepareNote ?? "")?.[1] ?? Number.NaN);
const rows: string[][] = [];
const metric = (name: string, pick: Pick, target?: number, digits?: number) => {
  const a = med(results.none, pick);
  const b = med(results.cards, pick);
  const q = ratio(b, a);
  rows.push([name, fmt(a, digits), fmt(b, digits), Number.isFinite(q) ? `${q.toFixed(2)}×` : "n/a", target ? `≤ ${target}×` : "", target ? (q <= target ? "PASS" : "FAIL") : ""]);
};
metric("p99 latency (ms)", (r) => r.p99, 1.2, 0);
metric("p50 latency (ms)", (r) => r.p50, undefined, 0);
metric("answers/s", (r) => r.throughput);
const lostNone = sum(results.none.map((r) => r.lost));
const lostCards = sum(results.cards.map((r) => r.lost));
rows.push(["lost answers (all rounds)", String(lostNone), String(lostCards), "", "0", lostCards === 0 && lostNone === 0 && results.cards.length > 0 ? "PASS" : "FAIL"]);
const dupCards = sum(results.cards.map((r) => r.duplicates));
rows.push(["duplicated answers", String(sum(results.none.map((r) => r.duplicates))), String(dupCards), "", "0", dupCards === 0 ? "PASS" : "FAIL"]);
const shown = median(results.cards.map(cardsShown));
rows.push(["cards shown (median)", "", fmt(shown, 0), "", String(CARDS), shown === CARDS ? "PASS" : "FAIL"]);
metric("CPU ms / message", (r) => r.cpuPerMessage);
metric("RSS at end (MB)", (r) => r.rssMb, undefined, 0);
rows.push(["rounds", String(okOf(results.none).length), String(okOf(results.cards).length), "", String(ROUNDS), budgetCut ? "(time budget)" : ""]);
out(`\nParked approvals: ${TIME_CHATS} time chats, without and with ${CARDS} approval cards waiting (medians)`);
out(renderTable(["metric", "no cards", `${CARDS} cards waiting`, "ratio", "target", "verdict"], rows));

const notes = new Set<string>();
const logs = new Map<string, number>();
for (const r of [...results.none, ...results.cards]) {
  if (!r.ok) notes.add(`a round failed: ${(r.error ?? "").split("\n").filter((l) => l.trim()).slice(0, 3).join(" | ")}`);
  else if (r.end === "exited") notes.add(`Gatehouse exited during a round with ${r.lost} of ${r.messages} time answers missing`);
  else if (r.end === "idle") notes.add(`a round stalled: no Bot API or model call for 15 s with ${r.lost} of ${r.messages} time answers missing`);
  else if (r.end === "cap") notes.add(`a round was cut at the time budget with ${r.lost} of ${r.messages} time answers missing (counted as lost)`);
  for (const [k, n] of r.logs) logs.set(k, (logs.get(k) ?? 0) + n);
}
if (notes.size) {
  out(`\nnotes:`);
  for (const n of notes) out(`  - ${n}`);
}
if (logs.size) {
  out(`\nGatehouse warnings and errors (all measured rounds):`);
  for (const [k, n] of [...logs].sort((a, b) => b[1] - a[1]).slice(0, 10)) out(`  ${String(n).padStart(6)} × ${k}`);
}
out(`\ntotal time ${Math.round(elapsed() / 1000)} s`);
clearTimeout(watchdog);
cleanupAll();
