/**
 * The one configuration schema. Every value the bot reads comes through here, from the
 * environment (and `.env`) or from the config file named by GATEHOUSE_CONFIG; see load.ts.
 */
import { z } from "zod";
import {
  ApprovalConfigSchema,
  HookConfigSchema,
  LoopConfigSchema,
  ReceiptsConfigSchema,
  ToolPolicyConfigSchema,
} from "../policy/schema.ts";
import { McpConfigSchema } from "../tools/mcp/schema.ts";
import { SchedulesSchema } from "./schedules.ts";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const ModelConfigSchema = z.strictObject({
  apiKey: z.string().min(1).optional(),
  baseURL: z.url({ protocol: /^https?$/, message: "must be an http:// or https:// URL such as http://127.0.0.1:11434/v1" }).optional(),
  name: z.string().min(1).default("gpt-4o-mini"),
  toolProtocol: z.enum(["native", "text", "auto"]).default("auto"),
  timeoutMs: z.number().int().positive().default(120_000),
  maxRetries: z.number().int().min(0).max(10).default(2),
  /**
   * Ask for streamed replies (the default): `timeoutMs` is then the wait for the first piece and for
   * each next one. false asks for whole replies, for a server or proxy whose streaming is broken or
   * slow; `timeoutMs` then covers the whole reply, so give a slow model enough.
   */
  stream: z.boolean().default(true),
  systemPrompt: z.string().optional(),
  /** The model's context window in tokens; unset: what the endpoint's /models reports, else 32,000 (the smaller when both are known). */
  contextTokens: z.number().int().min(1000).optional(),
  /** Tokens kept free for the answer; unset: an eighth of the window, 256 to 4,096. */
  answerReserveTokens: z.number().int().min(0).optional(),
});

const EngineConfigSchema = z.strictObject({
  maxIterations: z.number().int().min(1).max(100).default(10),
  maxToolResultChars: z.number().int().min(200).default(16_000),
  /** Output longer than this many characters is saved to a file and referenced by path. */
  spillToolResultChars: z.number().int().min(1000).default(200_000),
  parallelTools: z.boolean().default(false),
  /** How many stored messages are loaded as the prompt's history. */
  historyLimit: z.number().int().min(2).max(1000).default(40),
  /** Tools the duplicate guard never collapses (calls meant to repeat). */
  duplicateExempt: z.array(z.string()).default([]),
});

/** Who may talk to the bot on one channel. `*` means anyone; an empty list means no one. */
const AccessConfigSchema = z.strictObject({
  users: z.array(z.string()).default(["*"]),
  conversations: z.array(z.string()).default(["*"]),
  /** DMs: open to allowed users, or off. */
  dm: z.enum(["open", "off"]).default("open"),
  /** In groups and channels, answer only when addressed (mention, reply, or a thread the bot is in). */
  mentionGate: z.boolean().default(true),
  /** A refused sender is told so at most once per this period. */
  refusalCooldownMs: z.number().int().min(0).default(10 * 60_000),
});

/** How a task's progress shows in its thread: one live status message, a message per batch of lines, or nothing. */
const ProgressStyleSchema = z.enum(["status", "lines", "off"]);

const SlackConfigSchema = z.strictObject({
  botToken: z.string().regex(/^xoxb-/, "must be a bot token starting with xoxb- (OAuth & Permissions page)").optional(),
  appToken: z.string().regex(/^xapp-/, "must be an app-level token starting with xapp- (Basic Information → App-Level Tokens)").optional(),
  signingSecret: z.string().min(8).optional(),
  apiUrl: z.url({ protocol: /^https?$/, message: "must be an http:// or https:// URL" }).optional(),
  /** HTTP Events API mode: the port the events endpoint listens on (default: PORT, else 3000). */
  port: z.number().int().min(0).max(65535).optional(),
  slashCommand: z.string().regex(/^\//).optional(),
  progress: ProgressStyleSchema.optional(),
  access: AccessConfigSchema.prefault({}),
});

const DiscordConfigSchema = z.strictObject({
  token: z.string().regex(/^\S+$/, "must be the bot token from the Developer Portal (Bot → Reset Token), without spaces").optional(),
  apiUrl: z.url({ protocol: /^https?$/, message: "must be an http:// or https:// URL" }).optional(),
  allowedGuilds: z.array(z.string()).optional(),
  allowedChannels: z.array(z.string()).optional(),
  registerSlashCommands: z.boolean().default(false),
  progress: ProgressStyleSchema.optional(),
  access: AccessConfigSchema.prefault({}),
});

const TelegramConfigSchema = z.strictObject({
  botToken: z.string().regex(/^\d+:[A-Za-z0-9_-]+$/, "must look like 123456789:AAH… (from @BotFather)").optional(),
  apiRoot: z.url({ protocol: /^https?$/, message: "must be an http:// or https:// URL" }).optional(),
  webhookUrl: z.url({ protocol: /^https?$/, message: "must be an http:// or https:// URL" }).optional(),
  webhookSecret: z.string().regex(/^[A-Za-z0-9_-]{1,256}$/, "may contain only A-Z, a-z, 0-9, _ and -").optional(),
  /** Webhook mode: the local port (default: the webhook URL's explicit port, else PORT, else 8443). */
  webhookPort: z.number().int().min(0).max(65535).optional(),
  /** With `progress: "lines"`: one progress message per request, edited as lines come in. */
  editProgressInPlace: z.boolean().default(false),
  progress: ProgressStyleSchema.optional(),
  access: AccessConfigSchema.prefault({}),
}).refine((t) => !t.webhookUrl || t.webhookSecret, {
  path: ["webhookSecret"],
  message: "TELEGRAM_WEBHOOK_SECRET is required with TELEGRAM_WEBHOOK_URL, so that only Telegram can post updates",
});

const GatewayConfigSchema = z.strictObject({
  // A slot is held only while a turn computes (its answer goes out after it lets go), so this
  // bounds model requests and tool runs in flight; at 8 a busy bot's requests queued behind each
  // other while the model server and the machine still had room.
  maxConcurrentTurns: z.number().int().min(1).max(256).default(32),
  /** Messages waiting behind a running turn in one session, at most. */
  maxQueuedPerSession: z.number().int().min(0).max(100).default(5),
  dedupeTtlMs: z.number().int().min(1000).default(24 * 3600_000),
  /**
   * At shutdown, how long a computing turn may finish its current step (a model request, a running
   * tool) before it is cut short; it then continues after the restart from its last checkpoint.
   */
  shutdownGraceMs: z.number().int().min(0).max(60_000).default(4000),
  /**
   * With several replicas (DATABASE_URL): how long a replica's hold on a thread lasts without renewal,
   * i.e. how soon another replica picks up the threads of one that died.
   */
  leaseTtlMs: z.number().int().min(500).max(300_000).default(10_000),
});

const HttpToolConfigSchema = z.strictObject({
  allowPrivateNetwork: z.boolean().default(false),
  /**
   * Hosts `http_fetch` reaches without asking a person (and even when private): "api.example.com"
   * (any port), "api.example.com:8443" (that port only), "*.example.com".
   */
  allowHosts: z.array(z.string().min(1)).default([]),
  timeoutMs: z.number().int().positive().default(15_000),
});

const ShellToolConfigSchema = z.strictObject({
  timeoutMs: z.number().int().positive().default(60_000),
  /** "auto": run commands in the bubblewrap sandbox when the machine has it; "off": never. */
  sandbox: z.enum(["auto", "off"]).default("auto"),
  /** Offer the shell beyond the console even where commands cannot be sandboxed. */
  allowUnsandboxed: z.boolean().default(false),
  /** More paths the sandbox hides (the data folder, the config file and .env are always hidden). */
  hidePaths: z.array(z.string().min(1)).default([]),
});

export const ConfigSchema = z.strictObject({
  /** The JSON Schema the file follows (config.schema.json), for completion in an editor; ignored by the bot. */
  $schema: z.string().optional(),
  model: ModelConfigSchema.prefault({}),
  dataDir: z.string().min(1).default("./data"),
  workspace: z.string().min(1).optional(),
  logLevel: z.enum(LOG_LEVELS).default("info"),
  /** How tasks show their progress; `<channel>.progress` overrides it for one channel. */
  progress: ProgressStyleSchema.default("status"),
  /** The port HTTP receivers listen on when their own setting is absent (PORT, as platforms set it). */
  httpPort: z.number().int().min(0).max(65535).optional(),
  /** The address HTTP receivers bind to (HOST); unset: 0.0.0.0, every interface. Use 127.0.0.1 on a developer's machine. */
  httpHost: z.string().min(1).optional(),
  /** The bearer token of `POST /v1/turns` (GATEHOUSE_API_TOKEN); unset: the turns API refuses every call. */
  apiToken: z.string().min(16, "at least 16 characters").optional(),
  /** PostgreSQL for several replicas (postgres://user:password@host/db); unset: the embedded SQLite store. */
  databaseUrl: z.string().regex(/^postgres(ql)?:\/\//, "a postgres:// or postgresql:// URL").optional(),
  /** Channels to start; default: every channel whose token is set, else the console. */
  channels: z
    .array(z.enum(["console", "slack", "discord", "telegram"]))
    .refine((list) => new Set(list).size === list.length, "name each channel once (a channel started twice competes with itself)")
    .optional(),
  engine: EngineConfigSchema.prefault({}),
  gateway: GatewayConfigSchema.prefault({}),
  tools: ToolPolicyConfigSchema.prefault({}),
  approval: ApprovalConfigSchema.prefault({}),
  hooks: HookConfigSchema.prefault([]),
  receipts: ReceiptsConfigSchema.prefault({}),
  loop: LoopConfigSchema.prefault({}),
  mcp: McpConfigSchema.prefault({}),
  http: HttpToolConfigSchema.prefault({}),
  shell: ShellToolConfigSchema.prefault({}),
  slack: SlackConfigSchema.prefault({}),
  discord: DiscordConfigSchema.prefault({}),
  telegram: TelegramConfigSchema.prefault({}),
  schedules: SchedulesSchema,
});

export type Config = z.infer<typeof ConfigSchema>;
export type AccessConfig = z.infer<typeof AccessConfigSchema>;
export type ChannelName = "console" | "slack" | "discord" | "telegram";
