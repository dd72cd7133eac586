/**
 * The workspace must not hold what the bot keeps to itself. The file tools read and write anywhere
 * in the workspace, and read_file is approved by policy: a workspace that contains the data folder
 * (the store with every session's history and saved tool output, logs, receipt.key), the `.env` the
 * bot loads its secrets from, or the config file would hand them to the model, or let it rewrite
 * them for the next start. The bot refuses to start then; `gatehouse doctor` says the same.
 */
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "./load.ts";
import type { Config } from "./schema.ts";

/** Where to look for `.env` and the config file (as the loader does). */
export interface IsolationOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
}

/** The real path of `p`, for the part of it that exists (a missing tail is appended as written). */
function realish(p: string): string {
  const absolute = path.resolve(p);
  let existing = absolute;
  while (!existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  try {
    return path.join(realpathSync(existing), path.relative(existing, absolute));
  } catch {
    return absolute;
  }
}

function contains(folder: string, candidate: string): boolean {
  const rel = path.relative(folder, candidate);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** One problem per private thing inside the workspace, each saying what to change; empty when all is apart. */
export function workspaceIsolationProblems(config: Config, options: IsolationOptions = {}): string[] {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const workspace = realish(config.workspace ?? path.join(config.dataDir, "workspace"));
  const fix = "give GATEHOUSE_WORKSPACE a folder of its own (the default is <data dir>/workspace)";
  const problems: string[] = [];
  const dataDir = realish(config.dataDir);
  if (contains(workspace, dataDir)) {
    problems.push(
      `GATEHOUSE_WORKSPACE (workspace): ${workspace} contains the data folder ${dataDir}: the file tools could read or overwrite the store, the logs and receipt.key. Fix: ${fix}, or move GATEHOUSE_DATA_DIR out of it.`,
    );
  }
  const dotenv = realish(path.join(cwd, ".env"));
  if (contains(workspace, dotenv)) {
    problems.push(
      `GATEHOUSE_WORKSPACE (workspace): ${workspace} contains ${dotenv}, where the bot reads its secrets${existsSync(dotenv) ? "" : " (a file written there would be loaded at the next start)"}. Fix: ${fix}, or start the bot from a folder outside the workspace.`,
    );
  }
  if (env.GATEHOUSE_CONFIG) {
    const file = realish(path.resolve(cwd, env.GATEHOUSE_CONFIG));
    if (contains(workspace, file)) {
      problems.push(`GATEHOUSE_WORKSPACE (workspace): ${workspace} contains the config file ${file}: the model could rewrite the bot's policy. Fix: ${fix}, or move the config file out of it.`);
    }
  }
  return problems;
}

/** Throws ConfigError when the workspace holds the data folder, `.env` or the config file. Call before the bot starts. */
export function assertWorkspaceIsolated(config: Config, options: IsolationOptions = {}): void {
  const problems = workspaceIsolationProblems(config, options);
  if (problems.length) throw new ConfigError(problems);
}
