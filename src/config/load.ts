/**
 * Loads the configuration: the optional config file (GATEHOUSE_CONFIG; JSON or JSON5),
 * then the environment (and `.env`) on top, validated by one schema. A bad config fails
 * with one ConfigError that lists every invalid key and what is expected.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import type { z } from "zod";
import { ConfigSchema, type ChannelName, type Config } from "./schema.ts";

/** A configuration problem a person must fix; `message` lists every problem, one per line. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

/** Environment variable → config path. Environment overrides the file. */
const ENV_KEYS: Array<[string, string[], "string" | "list" | "number"]> = [
  ["OPENAI_API_KEY", ["model", "apiKey"], "string"],
  ["OPENAI_BASE_URL", ["model", "baseURL"], "string"],
  ["GATEHOUSE_MODEL", ["model", "name"], "string"],
  ["GATEHOUSE_TOOL_PROTOCOL", ["model", "toolProtocol"], "string"],
  ["GATEHOUSE_DATA_DIR", ["dataDir"], "string"],
  ["GATEHOUSE_WORKSPACE", ["workspace"], "string"],
  ["GATEHOUSE_CHANNELS", ["channels"], "list"],
  ["LOG_LEVEL", ["logLevel"], "string"],
  ["DATABASE_URL", ["databaseUrl"], "string"],
  ["SLACK_BOT_TOKEN", ["slack", "botToken"], "string"],
  ["SLACK_APP_TOKEN", ["slack", "appToken"], "string"],
  ["SLACK_SIGNING_SECRET", ["slack", "signingSecret"], "string"],
  ["SLACK_API_URL", ["slack", "apiUrl"], "string"],
  ["PORT", ["httpPort"], "number"],
  ["HOST", ["httpHost"], "string"],
  ["GATEHOUSE_API_TOKEN", ["apiToken"], "string"],
  ["DISCORD_TOKEN", ["discord", "token"], "string"],
  ["DISCORD_API_URL", ["discord", "apiUrl"], "string"],
  ["TELEGRAM_BOT_TOKEN", ["telegram", "botToken"], "string"],
  ["TELEGRAM_API_ROOT", ["telegram", "apiRoot"], "string"],
  ["TELEGRAM_WEBHOOK_URL", ["telegram", "webhookUrl"], "string"],
  ["TELEGRAM_WEBHOOK_SECRET", ["telegram", "webhookSecret"], "string"],
];

/** The environment variable that sets a config path (`model.apiKey` → OPENAI_API_KEY), if one does. */
export function envSourceOf(pathKey: string): string | undefined {
  return ENV_KEYS.find(([, p]) => p.join(".") === pathKey)?.[0];
}

function setPath(target: Record<string, unknown>, keys: string[], value: unknown): void {
  let node = target;
  for (const k of keys.slice(0, -1)) {
    if (typeof node[k] !== "object" || node[k] === null) node[k] = {};
    node = node[k] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

function readConfigFile(file: string): Record<string, unknown> {
  if (!existsSync(file)) throw new ConfigError([`GATEHOUSE_CONFIG: file not found: ${file}`]);
  let parsed: unknown;
  try {
    parsed = JSON5.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new ConfigError([`GATEHOUSE_CONFIG: ${file} is not valid JSON/JSON5: ${(err as Error).message}`]);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError([`GATEHOUSE_CONFIG: ${file} must hold an object at the top level`]);
  }
  return parsed as Record<string, unknown>;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const key = issue.path.map(String).join(".");
  const fromEnv = envSourceOf(key);
  const where = fromEnv ? `${fromEnv} (${key})` : key || "(top level)";
  if (issue.code === "invalid_union" && issue.errors.length > 0) return describeUnion(issue.path, where, issue.errors);
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) return `${where}: required (${issue.expected})`;
  if (issue.code === "unrecognized_keys") {
    const keys = (issue as { keys: string[] }).keys.map((k) => (key ? `${key}.${k}` : k));
    return `${keys.join(", ")}: unknown key${keys.length > 1 ? "s" : ""} (run \`gatehouse doctor\` for the closest valid key)`;
  }
  return `${where}: ${issue.message}`;
}

/**
 * A value that fits none of the forms a key takes (an MCP server: `command` or `url`): the problems
 * of the form it comes closest to, or, when none is closer, of each form in turn.
 */
function describeUnion(path: PropertyKey[], where: string, branches: z.core.$ZodIssue[][]): string {
  const inner = (issues: z.core.$ZodIssue[]) => issues.map((i) => describeIssue({ ...i, path: [...path, ...i.path] } as z.core.$ZodIssue));
  const fewest = Math.min(...branches.map((b) => b.length));
  const closest = branches.filter((b) => b.length === fewest);
  if (closest.length === 1) return inner(closest[0]!).join("; ");
  const forms = branches.map((b, i) => `form ${i + 1}: ${inner(b).join("; ")}`);
  return `${where}: fits none of its ${branches.length} forms (${forms.join(" — or ")})`;
}

export interface LoadOptions {
  env?: Env;
  cwd?: string;
  /** Read `.env` from cwd into the environment (default true when env is process.env). */
  dotenv?: boolean;
}

/** The raw (unvalidated) merge of file and environment; `doctor` inspects it. */
export function rawConfig(options: LoadOptions = {}): { raw: Record<string, unknown>; file?: string } {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  if ((options.dotenv ?? options.env === undefined) && existsSync(path.join(cwd, ".env"))) {
    // Existing environment variables win over .env entries.
    process.loadEnvFile(path.join(cwd, ".env"));
  }
  const file = env.GATEHOUSE_CONFIG ? path.resolve(cwd, env.GATEHOUSE_CONFIG) : undefined;
  const raw = file ? readConfigFile(file) : {};
  for (const [name, keys, kind] of ENV_KEYS) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    // A number must be written as one: " ", "0x50" or "1e3" is passed on as text, and refused as not a number.
    const parsed = kind === "list" ? value.split(",").map((s) => s.trim()).filter(Boolean) : kind === "number" ? numberOf(value) : value;
    setPath(raw, keys, parsed);
  }
  return { raw, file };
}

function numberOf(value: string): number | string {
  return /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
}

/** Loads and validates the configuration, resolving folders against cwd. Throws ConfigError. */
export function loadConfig(options: LoadOptions = {}): Config {
  const cwd = options.cwd ?? process.cwd();
  const { raw } = rawConfig(options);
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(result.error.issues.map(describeIssue));
  const config = result.data;
  config.dataDir = path.resolve(cwd, config.dataDir);
  config.workspace = path.resolve(cwd, config.workspace ?? path.join(config.dataDir, "workspace"));
  // What the bot keeps to itself stays out of the shell's sandbox, wherever it lives.
  const env = options.env ?? process.env;
  const own = [config.dataDir, path.join(cwd, ".env"), ...(env.GATEHOUSE_CONFIG ? [path.resolve(cwd, env.GATEHOUSE_CONFIG)] : [])];
  config.shell.hidePaths = [...new Set([...config.shell.hidePaths.map((p) => path.resolve(cwd, p)), ...own])];
  return config;
}

/** The problem when no model endpoint is configured, with how to fix it; undefined when fine. */
export function modelEndpointProblem(config: Config): string | undefined {
  if (config.model.apiKey || config.model.baseURL) return undefined;
  return [
    "No model endpoint is configured.",
    "  For OpenAI: set OPENAI_API_KEY=sk-... (in the environment or in .env).",
    "  For a local OpenAI-compatible server (Ollama, vLLM, LM Studio): set OPENAI_BASE_URL,",
    "  e.g. OPENAI_BASE_URL=http://127.0.0.1:11434/v1 and GATEHOUSE_MODEL=llama3.1 (no key needed).",
    "  For OpenRouter: OPENAI_BASE_URL=https://openrouter.ai/api/v1 and OPENAI_API_KEY=sk-or-...",
  ].join("\n");
}

/** The channels to start: the explicit list, else every channel with a token, else the console. */
export function channelsToStart(config: Config): ChannelName[] {
  if (config.channels?.length) return config.channels;
  const found: ChannelName[] = [];
  if (config.slack.botToken) found.push("slack");
  if (config.discord.token) found.push("discord");
  if (config.telegram.botToken) found.push("telegram");
  return found.length ? found : ["console"];
}

/** The password inside a database URL, so that logs never show it. */
function databasePassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/** Every secret value in the config, to be masked in logs and posts. */
export function configSecrets(config: Config): string[] {
  return [
    config.model.apiKey,
    config.slack.botToken,
    config.slack.appToken,
    config.slack.signingSecret,
    config.discord.token,
    config.telegram.botToken,
    config.telegram.webhookSecret,
    config.receipts.key,
    databasePassword(config.databaseUrl),
    config.apiToken,
    ...mcpSecrets(config),
  ].filter((s): s is string => typeof s === "string" && s.length > 0);
}

/**
 * What MCP servers are given to authenticate: their environment's values and their HTTP headers'
 * (a header's credential also alone, without its scheme: "Bearer <token>"). Short, plain values
 * (`NODE_ENV=production`) are not taken for secrets when registered (scrub.ts).
 */
function mcpSecrets(config: Config): string[] {
  const out: string[] = [];
  for (const server of Object.values(config.mcp.servers)) {
    const fields = server as { env?: Record<string, string>; headers?: Record<string, string> };
    out.push(...Object.values(fields.env ?? {}));
    for (const value of Object.values(fields.headers ?? {})) out.push(value, value.trim().split(/\s+/).at(-1) ?? "");
  }
  return out;
}
