/**
 * `gatehouse status [--deep]`: whether the bot is running (pid file, stale pid file), what it is
 * configured to serve, what the running process reports (turns, sessions, MCP, last error),
 * and the approvals pending in the store. `--deep` also probes every configured channel, the
 * model endpoint and each MCP server, with a short timeout each. With an invalid configuration
 * it still reports the process (the data folder is found leniently), then lists the problems.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { scrubSecrets } from "../observe/scrub.ts";
import { channelsToStart, ConfigError, configSecrets, loadConfig, rawConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { readRuntimeStatus, PID_FILE, type StatusSnapshot } from "../observe/runtime-status.ts";
import { registerSecret } from "../observe/scrub.ts";
import { silentLogger } from "../observe/logger.ts";
import { DATABASE_FILE } from "../store/sqlite-store.ts";
import { openStore } from "../store/open-store.ts";
import { Cron } from "croner";
import { SCHEDULE_LAST } from "../gateway/scheduler.ts";
import type { PendingApprovalRecord } from "../store/store.ts";
import { McpHub } from "../tools/mcp/hub.ts";
import { readArgs } from "./args.ts";
import { resolveDataDir } from "./data-dir.ts";
import {
  DEFAULT_DISCORD_API, DEFAULT_MODEL_API, DEFAULT_SLACK_API, DEFAULT_TELEGRAM_API, PROBE_TIMEOUT_MS,
  probeDiscord, probeModel, probeSlack, probeTelegram, type ProbeResult,
} from "./probes.ts";

/** A snapshot older than this means the process stopped refreshing it (it writes every 5 s). */
const STALE_SNAPSHOT_MS = 30_000;

/** Exit code when the configuration is invalid (the same as any command refused for a bad config). */
const EXIT_INVALID_CONFIG = 2;

/**
 * Runs the command; exit code 0 when the bot runs (and, with --deep, every probe passed), 1 when
 * it does not, 2 when the configuration is invalid (whether or not a bot runs with older settings).
 */
export async function runStatus(argv: string[]): Promise<number> {
  const { values } = readArgs(argv, { deep: { type: "boolean" } });
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return statusWithInvalidConfig(err, Boolean(values.deep));
  }
  for (const secret of configSecrets(config)) registerSecret(secret);
  const out: string[] = [`Gatehouse status (data folder ${config.dataDir})`, ""];

  const runtime = readRuntimeStatus(config.dataDir);
  const running = describeProcess(config.dataDir, runtime, out);
  const snapshot = running ? runtime?.snapshot : undefined;

  const configured = channelsToStart(config);
  out.push(row("Channels", `${configured.join(", ")} (configured)${snapshot ? `; running: ${snapshot.channels.join(", ") || "none"}` : ""}`));
  for (const broken of snapshot?.unhealthy ?? []) out.push(row("", `${broken.channel}: NOT CONNECTED: ${broken.detail}`));
  const configuredModel = `${config.model.name} at ${modelBase(config)}`;
  const runningModel = snapshot && snapshot.model !== configuredModel && snapshot.model !== modelBase(config) ? `; running: ${snapshot.model}` : "";
  out.push(row("Model", `${configuredModel}${config.model.apiKey ? " (API key set)" : ""}${runningModel}`));
  out.push(...describeMcp(config, snapshot));
  out.push(...describeActivity(snapshot));
  out.push(...(await describeApprovals(config.dataDir, config.databaseUrl)));
  out.push(...(await describeStored(config, Boolean(values.deep))));
  out.push(describeLastError(snapshot));

  let healthy = running;
  if (values.deep) {
    out.push("", `Probes (timeout ${PROBE_TIMEOUT_MS} ms each):`);
    const results = await deepProbes(config, configured);
    out.push(...formatProbes(results));
    healthy = healthy && results.every((r) => r.ok);
  }
  process.stdout.write(`${scrubSecrets(out.join("\n"))}\n`);
  return healthy ? 0 : 1;
}

/**
 * Status when the configuration cannot be loaded: what the data folder says about the process
 * (a running bot keeps the settings it started with), then every configuration problem.
 */
async function statusWithInvalidConfig(error: ConfigError, deep: boolean): Promise<number> {
  for (const secret of rawSecrets()) registerSecret(secret);
  const dataDir = resolveDataDir();
  const out: string[] = [`Gatehouse status (data folder ${dataDir})`, ""];
  const runtime = readRuntimeStatus(dataDir);
  const running = describeProcess(dataDir, runtime, out);
  const snapshot = running ? runtime?.snapshot : undefined;
  if (snapshot) {
    out.push(row("Channels", `running: ${snapshot.channels.join(", ") || "none"}`));
    out.push(row("Model", `${snapshot.model} (as the running bot was started)`));
  }
  out.push(...describeActivity(snapshot));
  out.push(...(await describeApprovals(dataDir)));
  out.push(describeLastError(snapshot));
  if (deep) out.push("", "Probes: skipped until the configuration is valid.");
  const one = error.problems.length === 1;
  const count = `${error.problems.length} problem${one ? "" : "s"}`;
  const consequence = running
    ? "the running bot keeps the settings it started with, but a restart would fail"
    : `the bot cannot start until ${one ? "it is" : "they are"} fixed`;
  out.push("", `Configuration: invalid, ${count} (${consequence}):`);
  out.push(...error.problems.map((p) => `  - ${p}`));
  out.push("Run `gatehouse doctor` to see how to fix each.");
  process.stdout.write(`${scrubSecrets(out.join("\n"))}\n`);
  return EXIT_INVALID_CONFIG;
}

/** The secrets in a configuration that does not validate, read leniently so they are still scrubbed. */
function rawSecrets(): string[] {
  let raw: Record<string, unknown>;
  try {
    raw = rawConfig().raw;
  } catch {
    return [];
  }
  const at = (...keys: string[]): unknown =>
    keys.reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined), raw);
  const candidates = [
    at("model", "apiKey"), at("slack", "botToken"), at("slack", "appToken"), at("slack", "signingSecret"),
    at("discord", "token"), at("telegram", "botToken"), at("telegram", "webhookSecret"), at("receipts", "key"),
  ];
  return candidates.filter((s): s is string => typeof s === "string" && s.length > 0);
}

/** Sessions and turns, as the running bot reports them. */
function describeActivity(snapshot: StatusSnapshot | undefined): string[] {
  if (!snapshot) return [];
  const parked = snapshot.parkedTurns ? `, ${snapshot.parkedTurns} parked (waiting for a person)` : "";
  const asking = snapshot.askingTurns ? `, ${snapshot.askingTurns} waiting for an answer to a tool's question` : "";
  return [row("Sessions", `${snapshot.sessionsSeen} seen since start`), row("Turns", `${snapshot.runningTurns} running${parked}${asking}`)];
}

function describeLastError(snapshot: StatusSnapshot | undefined): string {
  return row("Last error", snapshot?.lastError ? formatLastError(snapshot.lastError) : snapshot ? "none since start" : "unknown (the bot is not running)");
}

/** A line of the report: the label, or under the line above it when there is none. */
const row = (label: string, text: string) => `${(label ? `${label}:` : "").padEnd(12)}${text}`;

function modelBase(config: Config): string {
  return config.model.baseURL ?? DEFAULT_MODEL_API;
}

function ago(iso: string): string {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 90) return `${s}s`;
  if (s < 5400) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

/** The process line; true when a live, refreshing bot was found. */
function describeProcess(dataDir: string, runtime: ReturnType<typeof readRuntimeStatus>, out: string[]): boolean {
  const pidFile = path.join(dataDir, PID_FILE);
  if (!runtime) {
    out.push(row("Process", "not running (no pid file)"));
    return false;
  }
  if (!runtime.alive) {
    out.push(row("Process", `not running: stale pid file (pid ${runtime.pid} is gone; the bot did not shut down cleanly). Remove ${pidFile}.`));
    return false;
  }
  const snap = runtime.snapshot;
  if (!snap || snap.pid !== runtime.pid) {
    out.push(row("Process", `pid ${runtime.pid} is alive but wrote no status; it may be starting, or the pid was reused by another program`));
    return false;
  }
  const age = Date.now() - Date.parse(snap.updatedAt);
  if (age > STALE_SNAPSHOT_MS) {
    out.push(row("Process", `pid ${runtime.pid} is alive but its status is ${ago(snap.updatedAt)} old: the bot may be hung, or the pid was reused`));
    return false;
  }
  out.push(row("Process", `running, pid ${runtime.pid}, up ${ago(snap.startedAt)} (status updated ${ago(snap.updatedAt)} ago)`));
  return true;
}

function describeMcp(config: Config, snapshot: StatusSnapshot | undefined): string[] {
  const names = Object.keys(config.mcp.servers);
  if (!names.length) return [row("MCP", "no servers configured")];
  if (!snapshot) return [row("MCP", `${names.join(", ")} (configured; use --deep to try them)`)];
  return snapshot.mcp.map((s, i) => row(i === 0 ? "MCP" : "", formatMcp(s)));
}

function formatMcp(s: { name: string; state: string; tools: string[]; lastError?: string }): string {
  const tools = s.tools.length ? `${s.tools.length} tools: ${s.tools.slice(0, 6).join(", ")}${s.tools.length > 6 ? ", …" : ""}` : "no tools";
  return `${s.name}: ${s.state}, ${tools}${s.lastError ? ` (last error: ${s.lastError})` : ""}`;
}

function formatLastError(e: NonNullable<StatusSnapshot["lastError"]>): string {
  return `${ago(e.at)} ago, ${e.event}: ${e.message}${e.traceId ? ` (trace ${e.traceId}: gatehouse logs --trace ${e.traceId})` : ""}`;
}

async function describeApprovals(dataDir: string, databaseUrl?: string): Promise<string[]> {
  // Opening the SQLite store would create it; a bot that never ran has nothing pending.
  if (!databaseUrl && !existsSync(path.join(dataDir, DATABASE_FILE))) return [row("Approvals", "0 pending (no store yet)")];
  let pending: PendingApprovalRecord[];
  try {
    const store = await openStore({ dataDir, databaseUrl });
    try {
      pending = (await store.listApprovals("pending")).filter((a) => a.expiresAt > Date.now());
    } finally {
      await store.close();
    }
  } catch (err) {
    return [row("Approvals", `could not read the store: ${(err as Error).message}`)];
  }
  const lines = [row("Approvals", `${pending.length} pending`)];
  for (const a of pending.slice(0, 10)) {
    const left = Math.max(0, Math.round((a.expiresAt - Date.now()) / 1000));
    lines.push(row("", `${a.id}  ${a.tool}  for ${a.requesterName ?? a.requesterId} in ${a.sessionKey}, expires in ${left}s`));
  }
  if (pending.length > 10) lines.push(row("", `… and ${pending.length - 10} more`));
  return lines;
}

/**
 * Schedules with their next and last run (as the store recorded it), and with `--deep` the largest
 * sessions (most messages in their current history) and how full their context was last measured.
 */
async function describeStored(config: Config, deep: boolean): Promise<string[]> {
  if (!config.schedules.length && !deep) return [];
  if (!config.databaseUrl && !existsSync(path.join(config.dataDir, DATABASE_FILE))) return [];
  const lines: string[] = [];
  try {
    const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    try {
      for (const s of config.schedules) {
        const next = new Cron(s.cron, { timezone: s.timezone, paused: true }).nextRun();
        const stored = await store.getValue(`${SCHEDULE_LAST}${s.name}`);
        const last = stored ? (JSON.parse(stored) as { at: string; outcome: string }) : undefined;
        lines.push(row(lines.length ? "" : "Schedules", `${s.name}: next ${next?.toISOString() ?? "never"}, last ${last ? `${last.at} (${last.outcome})` : "never"}`));
      }
      if (deep) {
        const sessions = (await store.listSessions()).sort((a, b) => b.messageCount - a.messageCount).slice(0, 5);
        sessions.forEach((session, i) => lines.push(row(i ? "" : "Largest", `${session.key}: ${session.messageCount} messages`)));
      }
    } finally {
      await store.close();
    }
  } catch (err) {
    lines.push(row("Schedules", `could not read the store: ${(err as Error).message}`));
  }
  return lines;
}

/** Probes every configured channel (with a token), the model endpoint and each MCP server, in parallel. */
export async function deepProbes(config: Config, channels: string[]): Promise<ProbeResult[]> {
  const probes: Array<Promise<ProbeResult | ProbeResult[]>> = [];
  const skipped = (name: string, detail: string): ProbeResult => ({ name, ok: false, ms: 0, detail });
  if (channels.includes("slack")) {
    probes.push(config.slack.botToken ? probeSlack(config.slack.apiUrl ?? DEFAULT_SLACK_API, config.slack.botToken) : Promise.resolve(skipped("slack", "SLACK_BOT_TOKEN is not set")));
  }
  if (channels.includes("telegram")) {
    probes.push(config.telegram.botToken ? probeTelegram(config.telegram.apiRoot ?? DEFAULT_TELEGRAM_API, config.telegram.botToken) : Promise.resolve(skipped("telegram", "TELEGRAM_BOT_TOKEN is not set")));
  }
  if (channels.includes("discord")) {
    probes.push(config.discord.token ? probeDiscord(config.discord.apiUrl ?? DEFAULT_DISCORD_API, config.discord.token) : Promise.resolve(skipped("discord", "DISCORD_TOKEN is not set")));
  }
  if (config.model.apiKey || config.model.baseURL) probes.push(probeModel(modelBase(config), config.model.apiKey));
  else probes.push(Promise.resolve(skipped("model", "no model endpoint configured (OPENAI_API_KEY or OPENAI_BASE_URL)")));
  if (Object.keys(config.mcp.servers).length) probes.push(probeMcp(config));
  return (await Promise.all(probes)).flat();
}

/** Starts every MCP server (lazy ones too) the way the bot would, and reports each one. */
async function probeMcp(config: Config): Promise<ProbeResult[]> {
  const hub = new McpHub(config.mcp, silentLogger());
  const started = performance.now();
  try {
    const ready = (async () => {
      await hub.start();
      await hub.ready();
    })();
    await Promise.race([ready, new Promise((r) => setTimeout(r, PROBE_TIMEOUT_MS * 2).unref())]);
    const ms = Math.round(performance.now() - started);
    return hub.status().map((s) => ({
      name: `mcp:${s.name}`,
      ok: s.state === "connected",
      ms,
      detail: s.state === "connected" ? `${s.transport}, ${s.tools.length} tools` : `${s.transport}, ${s.state}${s.lastError ? `: ${s.lastError}` : ""}`,
    }));
  } finally {
    await hub.close();
  }
}

/** Aligned probe lines: name, ok/FAILED, latency, detail. */
export function formatProbes(results: ProbeResult[]): string[] {
  const width = Math.max(8, ...results.map((r) => r.name.length));
  return results.map((r) => `  ${r.name.padEnd(width)}  ${(r.ok ? "ok" : "FAILED").padEnd(6)}  ${`${r.ms} ms`.padStart(7)}  ${r.detail}`);
}
