/**
 * The MCP hub: every configured MCP server, connected at boot (or on first use when `lazy`),
 * exposed as one list of Tools. A server that fails never takes the bot down: it is reported
 * in `status()`, retried with backoff, and its known tools answer "unavailable" meanwhile.
 */
import type { Logger } from "pino";
import type { AnyTool } from "../tool.ts";
import { registerSecret } from "../../observe/scrub.ts";
import { DEFAULT_BACKOFF, McpServerConnection, type Backoff, type McpServerState } from "./connection.ts";
import { createMcpTool } from "./mcp-tool.ts";
import { isStdioServer, type McpConfig, type McpServerConfig } from "./schema.ts";

/** One server's line in `gatehouse status` and the logs. */
export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http";
  state: McpServerState;
  /** Tool names as the model sees them, from the last listing. */
  tools: string[];
  lastError?: string;
}

/** Knobs for tests and embedding; the defaults are what production uses. */
export interface McpHubOptions {
  backoff?: Backoff;
  /** The folder file tools work in, offered to every server as its root (MCP `roots`). */
  workspace?: string;
}

/** Owns the connections to all configured MCP servers. */
export class McpHub {
  readonly config: McpConfig;
  #log: Logger;
  #connections: McpServerConnection[];
  #toolCache = new Map<McpServerConnection, AnyTool[]>();

  constructor(config: McpConfig, log: Logger, options: McpHubOptions = {}) {
    this.config = config;
    this.#log = log;
    this.#connections = Object.entries(config.servers).map(([name, server]) => {
      registerServerSecrets(server);
      const connection = new McpServerConnection(name, server, log, options.backoff ?? DEFAULT_BACKOFF, options.workspace);
      connection.onListingChanged = () => this.#toolCache.delete(connection);
      return connection;
    });
  }

  /** Connects every non-lazy server in parallel. Resolves when each has connected or failed once; never rejects. */
  async start(): Promise<void> {
    await Promise.all(this.#connections.filter((c) => !c.config.lazy).map((c) => c.connect()));
    const summary = this.status().map((s) => ({ server: s.name, state: s.state, tools: s.tools.length, error: s.lastError }));
    if (summary.length) this.#log.info({ servers: summary }, "MCP servers started");
  }

  /** Starts lazy servers that have not been started yet and waits for their first attempt. */
  async ready(): Promise<void> {
    await Promise.all(this.#connections.filter((c) => c.state === "stopped" || c.state === "connecting").map((c) => c.connect()));
  }

  /**
   * The tools of every server, by each server's last known listing. The first call also starts
   * lazy servers in the background; `await ready()` first to have their tools in this list.
   */
  tools(): AnyTool[] {
    const all: AnyTool[] = [];
    for (const connection of this.#connections) {
      if (connection.state === "stopped") void connection.connect();
      all.push(...this.#toolsOf(connection));
    }
    return all;
  }

  /** A server's tools, built once per listing (so a name collision is logged once, not at every status). */
  #toolsOf(connection: McpServerConnection): AnyTool[] {
    let tools = this.#toolCache.get(connection);
    if (!tools) {
      tools = this.#buildTools(connection);
      this.#toolCache.set(connection, tools);
    }
    return tools;
  }

  /** Where every server stands, with its tools and last error. */
  status(): McpServerStatus[] {
    return this.#connections.map((c) => ({
      name: c.name,
      transport: c.transport,
      state: c.state,
      tools: this.#toolsOf(c).map((t) => t.name),
      ...(c.lastError ? { lastError: c.lastError } : {}),
    }));
  }

  /** Tool names are made model-safe, so two server names can collide; the first one wins. */
  #buildTools(connection: McpServerConnection): AnyTool[] {
    const byName = new Map<string, AnyTool>();
    for (const listing of connection.listing) {
      const tool = createMcpTool(connection, listing);
      if (byName.has(tool.name)) {
        this.#log.warn({ mcpServer: connection.name, tool: listing.name, as: tool.name }, "MCP tool skipped: made model-safe, its name is that of another tool of the server");
      }
      else byName.set(tool.name, tool);
    }
    return [...byName.values()];
  }

  /** Disconnects every server and stops their processes and retries. */
  async close(): Promise<void> {
    await Promise.all(this.#connections.map((c) => c.close()));
  }
}

/** Header values and secret-looking env values must never reach a log line or chat message. */
function registerServerSecrets(server: McpServerConfig): void {
  const values = isStdioServer(server)
    ? Object.entries(server.env ?? {}).filter(([key]) => /token|key|secret|password|auth/i.test(key)).map(([, v]) => v)
    : Object.entries(server.headers ?? {}).filter(([key]) => /authorization|token|key|secret|cookie|auth/i.test(key)).map(([, v]) => v);
  for (const value of values) {
    registerSecret(value);
    // "Bearer abc…": the bare token can appear without its scheme.
    registerSecret(value.replace(/^(Bearer|Basic|Bot|Token)\s+/i, ""));
  }
}
