/**
 * The `mcp` section of the config file: which MCP servers to connect to, how their tools are
 * offered (all at once, or deferred behind `tool_search`), and the filter groups that decide
 * which MCP tools a turn may see.
 */
import { z } from "zod";

/** Server names become tool-name prefixes (`<server>__<tool>`), so they must be model-safe. */
const ServerName = z
  .string()
  .regex(/^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$/, "use letters, digits, '-' and single '_' (the tool separator is '__')")
  .max(32);

/** How much harm a call can do, as the policy reads it (see src/tools/tool.ts). */
const Risk = z.enum(["read", "write", "exec"]);

/**
 * Whether the server may ask the bot's model for a completion (MCP sampling). Off unless configured:
 * each request then passes the gate as a call of `mcp__<server>__sampling`.
 */
const SamplingSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** The most tokens one answer may take, whatever the server asks for. */
  maxTokens: z.number().int().positive().default(1_000),
});

/** Settings every MCP server has, whatever its transport. */
const CommonServerFields = {
  /**
   * How long one tool call may go without an answer before it fails; each progress report from the
   * server starts the wait again, up to `maxCallMs`.
   */
  timeoutMs: z.number().int().positive().default(30_000),
  /** The longest a call may take however often the server reports progress (default 10 minutes). */
  maxCallMs: z.number().int().positive().default(600_000),
  /**
   * The risk of every tool of this server, whatever the tools' own annotations say: `exec` for a
   * server that runs commands, `read` for one trusted to only read. Without it, annotations decide:
   * read-only tools of a closed world are "read", everything else (destructive, open-world, or not
   * annotated) is "write" and asks first.
   */
  risk: Risk.optional(),
  /** The risk of single tools (by the server's tool name or the name the model sees); beats `risk`. */
  toolRisk: z.record(z.string(), Risk).default({}),
  /** Every tool of this server only reads: the same as `risk: "read"`. */
  readOnly: z.boolean().default(false),
  /** MCP tool names (as the server names them) that only read: the same as `toolRisk` "read". */
  readOnlyTools: z.array(z.string()).default([]),
  /** Connect on first use instead of at boot. */
  lazy: z.boolean().default(false),
  sampling: SamplingSchema.optional(),
};

/** A server the bot starts as a child process and talks to over stdin/stdout. */
export const StdioServerSchema = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  ...CommonServerFields,
});

/** A server reached over Streamable HTTP. */
export const HttpServerSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
  ...CommonServerFields,
});

/** One MCP server entry: stdio when it has `command`, HTTP when it has `url`. */
export const McpServerSchema = z.union([StdioServerSchema, HttpServerSchema]);

/** Decides which MCP tools a turn may see: `always` every turn, `dynamic` when the message has a keyword. */
export const FilterGroupSchema = z
  .strictObject({
    mode: z.enum(["always", "dynamic"]),
    /** Globs over tool names (`github__*`) or ids (`mcp:github__*`); `*` matches anything. */
    tools: z.array(z.string().min(1)).min(1),
    keywords: z.array(z.string().min(1)).default([]),
  })
  .refine((g) => g.mode === "always" || g.keywords.length > 0, {
    message: "a dynamic filter group needs at least one keyword",
    path: ["keywords"],
  });

/** The whole `mcp` config section, with defaults filled in. */
export const McpConfigSchema = z.strictObject({
  servers: z.record(ServerName, McpServerSchema).default({}),
  /** Offer only MCP tool names plus `tool_search` until the model activates tools. */
  deferred: z.boolean().default(false),
  filterGroups: z.array(FilterGroupSchema).default([]),
});

export type McpConfig = z.infer<typeof McpConfigSchema>;
export type McpServerConfig = z.infer<typeof McpServerSchema>;
export type StdioServerConfig = z.infer<typeof StdioServerSchema>;
export type HttpServerConfig = z.infer<typeof HttpServerSchema>;
export type FilterGroup = z.infer<typeof FilterGroupSchema>;

/** True when the server is started as a child process. */
export function isStdioServer(server: McpServerConfig): server is StdioServerConfig {
  return "command" in server;
}
