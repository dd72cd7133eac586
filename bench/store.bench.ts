/**
 * Store benchmark: appends 10,000 messages to one session (one append per message, as turns do)
 * and loads the last 50 a thousand times, against a real database file in a temp folder.
 * Run with `node bench/store.bench.ts`; not part of `npm test`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openSqliteStore } from "../src/store/sqlite-store.ts";

const MESSAGES = 10_000;
const LOADS = 1_000;
const WINDOW = 50;

function report(label: string, ops: number, ms: number): void {
  const rate = Math.round((ops / ms) * 1000);
  process.stdout.write(`${label.padEnd(34)} ${String(ops).padStart(6)} ops  ${ms.toFixed(0).padStart(6)} ms  ${rate.toLocaleString("en-US").padStart(9)} ops/s\n`);
}

const root = mkdtempSync(join(tmpdir(), "gatehouse-bench-"));
try {
  const store = await openSqliteStore({ dataDir: join(root, "data") });
  const session = "slack:C0BENCH:1700000000.000100";

  let start = performance.now();
  for (let i = 0; i < MESSAGES; i++) {
    const message = i % 2 === 0
      ? { role: "user" as const, content: `message ${i}: please summarise the deploy log for service ${i % 17}` }
      : { role: "assistant" as const, content: `Reply ${i}. The deploy finished; ${i % 5} warnings, no errors.` };
    await store.appendHistory(session, [message]);
  }
  report(`appendHistory (1 message)`, MESSAGES, performance.now() - start);

  start = performance.now();
  let loaded = 0;
  for (let i = 0; i < LOADS; i++) loaded += (await store.loadHistory(session, WINDOW)).length;
  report(`loadHistory (last ${WINDOW})`, LOADS, performance.now() - start);
  if (loaded !== LOADS * WINDOW) throw new Error(`expected ${LOADS * WINDOW} messages loaded, got ${loaded}`);

  await store.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
