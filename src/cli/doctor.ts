/**
 * `gatehouse doctor [--offline]`: checks the configuration, the environment and (when tokens are
 * set) each platform, and prints every problem with its fix. Exits 1 when a problem would stop
 * the bot, 0 when there are only warnings.
 */
import path from "node:path";
import { configSecrets } from "../config/load.ts";
import { registerSecret } from "../observe/scrub.ts";
import { readArgs } from "./args.ts";
import { checkConfig, checkEnvironment } from "./config-checks.ts";
import { resolveDataDir } from "./data-dir.ts";
import { finding, formatFindings, type Finding } from "./findings.ts";
import { checkPlatforms } from "./platform-checks.ts";

/** Runs the command; returns 1 when a fatal problem was found, else 0. */
export async function runDoctor(argv: string[]): Promise<number> {
  const { values } = readArgs(argv, { offline: { type: "boolean" } });
  const checked = checkConfig();
  const findings: Finding[] = [...checked.findings];
  const dataDir = checked.config?.dataDir ?? resolveDataDir();
  findings.push(...checkEnvironment(dataDir));
  if (checked.config) {
    for (const secret of configSecrets(checked.config)) registerSecret(secret);
    if (values.offline) findings.push(finding("note", "online checks", "skipped (--offline)"));
    else findings.push(...(await checkPlatforms(checked.config)));
  } else {
    findings.push(finding("note", "online checks", "skipped until the configuration can be read"));
  }
  const where = checked.file ? `config ${path.relative(process.cwd(), checked.file) || checked.file} + environment` : "environment only";
  process.stdout.write(`Gatehouse doctor (${where}; data folder ${dataDir})\n\n${formatFindings(findings)}\n`);
  return findings.some((f) => f.severity === "fatal") ? 1 : 0;
}
