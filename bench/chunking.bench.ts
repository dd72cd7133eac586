/**
 * Splitting benchmark: long answers with code fences split at Discord's, Telegram's and Slack's
 * limits. Prints parts per answer and answers per second. Run with `npm run bench -- chunking`.
 */
import { performance } from "node:perf_hooks";
import { splitMessage } from "../src/delivery/chunking.ts";

const paragraph = "The deploy finished with warnings. ".repeat(20);
const code = "```ts\n" + Array.from({ length: 80 }, (_, i) => `const line${i} = ${i}; // ${"x".repeat(30)}`).join("\n") + "\n```\n";
const answer = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? code : `${paragraph}\n\n`)).join("");

for (const limit of [2000, 4000, 4096]) {
  const runs = 500;
  let parts = 0;
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) parts = splitMessage(answer, limit).length;
  const ms = performance.now() - t0;
  process.stdout.write(
    `${String(answer.length).padStart(6)} chars at ${String(limit).padStart(4)}: ${String(parts).padStart(3)} parts, ${(runs / (ms / 1000)).toFixed(0).padStart(6)} answers/s\n`,
  );
}
