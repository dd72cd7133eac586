/**
 * `npm run bench`: runs every `bench/*.bench.ts` one after another in its own process and
 * prints their figures. Not part of `npm test`: figures depend on the machine.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";

const dir = import.meta.dirname;
const only = process.argv[2];
let failed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith(".bench.ts")).sort()) {
  if (only && !file.includes(only)) continue;
  process.stdout.write(`\n== ${file}\n`);
  const run = spawnSync(process.execPath, ["--expose-gc", path.join(dir, file)], { stdio: "inherit" });
  if (run.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
