/**
 * The offline half of `gatehouse doctor`: the configuration (every invalid or unknown key, with
 * the closest valid key; tokens in the wrong variable), what it means (no model endpoint, a
 * channel missing its second token, shell offered to everyone, receipts without a key) and the
 * environment (Node version, a writable data folder).
 */
import { accessSync, constants, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { ConfigError, envSourceOf, modelEndpointProblem, rawConfig, type LoadOptions } from "../config/load.ts";
import { ConfigSchema, type Config } from "../config/schema.ts";
import { explainPolicy } from "../policy/explain.ts";
import { shellTool } from "../tools/builtin/shell.ts";
import { builtinTools } from "../tools/builtin/index.ts";
import { approverRuleProblems } from "../approval/rule-checks.ts";
import { closestKey, schemaKeyPaths } from "./closest-key.ts";
import { finding, type Finding } from "./findings.ts";
import { containmentChecks } from "./gate-checks.ts";

/** The oldest Node that runs the bot (type stripping and node:sqlite without flags). */
export const MIN_NODE = [22, 18] as const;

function valueAt(raw: Record<string, unknown>, keys: PropertyKey[]): unknown {
  let node: unknown = raw;
  for (const k of keys) node = node && typeof node === "object" ? (node as Record<PropertyKey, unknown>)[k] : undefined;
  return node;
}

function deleteAt(raw: Record<string, unknown>, keys: PropertyKey[]): void {
  const parent = valueAt(raw, keys.slice(0, -1));
  if (parent && typeof parent === "object") delete (parent as Record<PropertyKey, unknown>)[keys.at(-1)!];
}

/** A token pasted into the other token's variable, named with where each one belongs. */
function swappedToken(key: string, value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  if (key === "slack.botToken" && value.startsWith("xapp-")) {
    return "holds an app-level token (xapp-…). Put it in SLACK_APP_TOKEN; SLACK_BOT_TOKEN takes the Bot User OAuth Token (xoxb-…) from OAuth & Permissions.";
  }
  if (key === "slack.appToken" && value.startsWith("xoxb-")) {
    return "holds a bot token (xoxb-…). Put it in SLACK_BOT_TOKEN; SLACK_APP_TOKEN takes the app-level token (xapp-…) from Basic Information → App-Level Tokens (scope connections:write).";
  }
  if (key === "slack.botToken" && /^xox[pe]-/.test(value)) {
    return "holds a user token (xoxp-…). Use the Bot User OAuth Token (xoxb-…) from OAuth & Permissions.";
  }
  return undefined;
}

function issueFindings(issue: z.core.$ZodIssue, raw: Record<string, unknown>, paths: string[]): Finding[] {
  const at = issue.path.map(String);
  const key = at.join(".");
  const env = envSourceOf(key);
  const label = env ? `${env} (${key})` : key || "(top level)";
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((k) => {
      const full = [...at, k];
      const near = closestKey(full, paths);
      // A key of another form of the same setting (an MCP server's `url` beside its `command`).
      const hint = near === full.join(".")
        ? "it belongs to another form of this setting: use one form only (an MCP server has either command or url)"
        : near ? `did you mean "${near}"?` : "remove it; see .env.example and the README for valid keys";
      return finding("fatal", full.join("."), "unknown key (the bot refuses a config with unknown keys)", hint);
    });
  }
  if (issue.code === "invalid_union" && issue.errors.length) {
    // Report the branch that came closest (fewest problems): that is what the person meant.
    const branch = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
    return branch.flatMap((inner) => issueFindings({ ...inner, path: [...issue.path, ...inner.path] }, raw, paths));
  }
  const swapped = swappedToken(key, valueAt(raw, issue.path));
  if (swapped) return [finding("fatal", label, swapped)];
  return [finding("fatal", label, issue.message, env?.endsWith("TOKEN") ? `check ${env} in the environment or .env` : undefined)];
}

/** The result of the offline checks; `config` is the configuration with invalid keys dropped, for further checks. */
export interface ConfigCheck {
  findings: Finding[];
  config?: Config;
  file?: string;
}

/** Validates the configuration and reports every problem; never throws for a bad config. */
export function checkConfig(options: LoadOptions = {}): ConfigCheck {
  const cwd = options.cwd ?? process.cwd();
  let raw: Record<string, unknown>;
  let file: string | undefined;
  try {
    ({ raw, file } = rawConfig(options));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { findings: err.problems.map((p) => finding("fatal", "config file", p)) };
  }
  const paths = schemaKeyPaths(ConfigSchema);
  const findings: Finding[] = [];
  const working = structuredClone(raw);
  let parsed = ConfigSchema.safeParse(working);
  // Drop what is invalid and try again, so every problem is named and later checks still run.
  for (let round = 0; !parsed.success && round < 5; round++) {
    for (const issue of parsed.error.issues) {
      if (round === 0) findings.push(...issueFindings(issue, raw, paths));
      if (issue.code === "unrecognized_keys") for (const k of issue.keys) deleteAt(working, [...issue.path, k]);
      else deleteAt(working, issue.path);
    }
    parsed = ConfigSchema.safeParse(working);
  }
  if (!parsed.success) return { findings, file };
  const config = parsed.data;
  config.dataDir = path.resolve(cwd, config.dataDir);
  config.workspace = path.resolve(cwd, config.workspace ?? path.join(config.dataDir, "workspace"));
  if (!findings.length) findings.push(finding("ok", "configuration", file ? `valid (${file} and the environment)` : "valid (from the environment)"));
  findings.push(...meaningChecks(config, consoleOnly(raw)), ...containmentChecks(config, { cwd, env: options.env }));
  return { findings, config, file };
}

/** Whether only the console would start: no platform token set (valid or not) and no other channel named. */
function consoleOnly(raw: Record<string, unknown>): boolean {
  const at = (section: string, key: string) => (raw[section] as Record<string, unknown> | undefined)?.[key];
  const channels = Array.isArray(raw.channels) ? (raw.channels as unknown[]) : undefined;
  if (channels?.length) return channels.every((c) => c === "console");
  return !at("slack", "botToken") && !at("discord", "token") && !at("telegram", "botToken");
}

/** Checks of what a valid configuration means for the bot. */
function meaningChecks(config: Config, onlyConsole: boolean): Finding[] {
  const out: Finding[] = [];
  const model = modelEndpointProblem(config);
  if (model) {
    const [first, ...rest] = model.split("\n");
    const fix = rest.map((l) => l.trim()).join("\n");
    // On the console alone, `npm start` runs on the built-in demo model instead of stopping.
    if (onlyConsole) out.push(finding("warn", "model", `${first!} The console runs on the built-in demo model (a script, not an LLM).`, fix));
    else out.push(finding("fatal", "model", first!, fix));
  }
  const s = config.slack;
  if (s.botToken && !s.appToken && !s.signingSecret) {
    out.push(finding("fatal", "slack", "SLACK_BOT_TOKEN is set, but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP events) is", "set SLACK_APP_TOKEN=xapp-… (Basic Information → App-Level Tokens, scope connections:write)"));
  }
  if (!s.botToken && (s.appToken || s.signingSecret)) {
    out.push(finding(config.channels?.includes("slack") ? "fatal" : "warn", "slack", "SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set but SLACK_BOT_TOKEN is not, so Slack does not start", "set SLACK_BOT_TOKEN=xoxb-… (OAuth & Permissions → Bot User OAuth Token)"));
  }
  for (const [channel, token] of [["slack", s.botToken], ["discord", config.discord.token], ["telegram", config.telegram.botToken]] as const) {
    if (config.channels?.includes(channel) && !token) out.push(finding("fatal", channel, `GATEHOUSE_CHANNELS names ${channel}, but its token is not set`));
  }
  if (config.telegram.webhookSecret && !config.telegram.webhookUrl) {
    out.push(finding("warn", "telegram", "TELEGRAM_WEBHOOK_SECRET is set without TELEGRAM_WEBHOOK_URL, so it is unused (the bot polls)"));
  }
  out.push(...shellExposure(config));
  // Approver rules the bot would refuse at start (platform groups are checked by the online half).
  const builtins = builtinTools({ workspace: config.workspace!, http: config.http, shell: config.shell });
  for (const problem of approverRuleProblems(config.approval, builtins)) {
    const [key, ...rest] = problem.split(": ");
    out.push(finding("fatal", key!, rest.join(": ")));
  }
  if (config.receipts.enabled && !config.receipts.key && !existsSync(path.join(config.dataDir, "receipt.key"))) {
    out.push(finding("warn", "receipts", `receipts are enabled without a key: one will be generated at the first start in ${path.join(config.dataDir, "receipt.key")}`, "set receipts.key (16+ characters) in the config file, or back up that file: receipts cannot be verified without it"));
  }
  return out;
}

/** A shell offered to anyone who can write to the bot on a platform channel. */
function shellExposure(config: Config): Finding[] {
  const out: Finding[] = [];
  const shell = { name: "shell", risk: "exec" as const, owner: "builtin" as const, localOnly: shellTool(config.shell).localOnly };
  for (const channel of ["slack", "discord", "telegram"] as const) {
    const [row] = explainPolicy(config.tools, config.approval, [shell], { channel, senderId: "doctor-unlisted-sender" });
    if (!row?.offered) continue;
    const pattern = config.tools.elevated.allowFrom.find((p) => p === "*" || p === `${channel}:*`);
    out.push(finding("warn", "tools.elevated.allowFrom",
      `the shell tool is offered to everyone on ${channel}${pattern ? ` ("${pattern}")` : ""}: anyone who can message the bot there can ask it to run commands (${row.approval === "prompt" ? "each call still needs an approval" : `approval: ${row.approval}`})`,
      `list people instead, e.g. "allowFrom": ["console:*", "${channel}:<your user id>"], or deny shell there`));
  }
  return out;
}

/** Node version and the data folder. */
export function checkEnvironment(dataDir: string, nodeVersion = process.versions.node): Finding[] {
  const out: Finding[] = [];
  const [major = 0, minor = 0] = nodeVersion.split(".").map(Number);
  const tooOld = major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1]);
  out.push(tooOld
    ? finding("fatal", "node", `Node ${nodeVersion} is too old (needs ${MIN_NODE.join(".")} or newer: TypeScript type stripping and node:sqlite)`, "install Node 24 LTS (or 22.18+)")
    : finding("ok", "node", `Node ${nodeVersion}`));
  out.push(dataDirFinding(dataDir));
  return out;
}

function dataDirFinding(dataDir: string): Finding {
  let existing = dataDir;
  while (!existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  try {
    if (!statSync(existing).isDirectory()) throw new Error("not a folder");
    accessSync(existing, constants.W_OK);
    if (existing === dataDir) rmSync(mkdtempSync(path.join(dataDir, ".doctor-")), { recursive: true });
  } catch {
    return finding("fatal", "data folder", `${dataDir} is not writable${existing === dataDir ? "" : ` (it does not exist, and ${existing} is not a folder the bot can write in)`}`,
      "point GATEHOUSE_DATA_DIR at a folder the bot's user can write, or fix its permissions");
  }
  return finding("ok", "data folder", existing === dataDir ? `${dataDir} is writable` : `${dataDir} will be created`);
}
