/**
 * One MCP server as the bot sees it: a connection that is made at boot or on first use,
 * remembers the server's last tool listing, and after a failure or crash is retried with
 * backoff (1s, 2s, 4s … up to 30s) while its tools answer "unavailable". The bot declares the
 * `roots` capability (the workspace is its one root), `elicitation` (a server may ask the person
 * behind a call a question) and, where configured, `sampling`; asks for progress on every call; and
 * lets a call that keeps reporting progress, or waits on the bot, run past its timeout, up to a hard
 * maximum.
 */
import { pathToFileURL } from "node:url";
import type { Logger } from "pino";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, ListRootsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ToolResult } from "../tool.ts";
import { scrubSecrets } from "../../observe/scrub.ts";
import { isStdioServer, type McpServerConfig } from "./schema.ts";
import { toToolResult, type McpCallResult } from "./result.ts";
import { throttledProgress } from "./call-progress.ts";
import { CallClock } from "./call-clock.ts";
import { handleServerRequests, requestCapabilities, RunningCalls, type McpCallContext } from "./server-requests.ts";
import type { McpToolAnnotations } from "./risk.ts";
import { createServerTransport } from "./transport.ts";

/** Where a server connection stands; `stopped` means not started yet (lazy) or closed. */
export type McpServerState = "connected" | "connecting" | "failed" | "stopped";

/** One tool as the server last listed it. */
export interface McpToolListing {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** The server's hints about the tool (read-only, destructive, open world). */
  annotations?: McpToolAnnotations;
}

/** Delays between reconnection attempts. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** The delays the issue asks for: 1s, doubling, at most 30s. */
export const DEFAULT_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 30_000 };
/** The least time a server gets to start and list its tools, whatever its per-call timeout. */
const MIN_START_TIMEOUT_MS = 15_000;

const STDERR_LINES_KEPT = 5;

/** A connection to one configured MCP server. Never throws: failures become state and results. */
export class McpServerConnection {
  readonly name: string;
  readonly config: McpServerConfig;
  state: McpServerState = "stopped";
  /** The last listing the server gave; kept while the server is down so its tools stay known. */
  listing: McpToolListing[] = [];
  lastError: string | undefined;
  /** Called after the listing changes (connect, or the server's list-changed notification). */
  onListingChanged: (() => void) | undefined;

  #log: Logger;
  #backoff: Backoff;
  #client: Client | undefined;
  #connecting: Promise<void> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #connectedAt = 0;
  #closed = false;
  #stderrTail: string[] = [];
  #exitStatus: () => string | undefined = () => undefined;
  #workspace: string | undefined;
  #running = new RunningCalls();

  /** `workspace`, when given, is offered to the server as its root. */
  constructor(name: string, config: McpServerConfig, log: Logger, backoff: Backoff = DEFAULT_BACKOFF, workspace?: string) {
    this.name = name;
    this.config = config;
    this.#log = log.child({ mcpServer: name });
    this.#backoff = backoff;
    this.#workspace = workspace;
  }

  get transport(): "stdio" | "http" {
    return isStdioServer(this.config) ? "stdio" : "http";
  }

  /** Connects unless already connected or connecting; resolves when this attempt settles. Never rejects. */
  connect(): Promise<void> {
    if (this.#closed || this.state === "connected") return Promise.resolve();
    if (this.#connecting) return this.#connecting;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#connecting = this.#attempt().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /**
   * Calls one of the server's tools, bounded by the server's timeout (restarted by each progress
   * report, held while the server waits on the bot, up to `maxCallMs`) and the turn's cancellation;
   * progress reports go to `ctx.onProgress`, the server's questions and sampling requests to the turn.
   */
  async call(tool: string, args: Record<string, unknown>, ctx: McpCallContext): Promise<ToolResult> {
    if (this.state === "stopped" || this.state === "connecting") await this.connect();
    const client = this.#client;
    if (this.state !== "connected" || !client) return this.unavailable();
    const { signal } = ctx;
    const { timeoutMs, maxCallMs } = this.config;
    const longest = Math.max(maxCallMs, timeoutMs);
    const clock = new CallClock(timeoutMs);
    const ended = new AbortController();
    const untrack = this.#running.add({ tool, ctx, clock, ended: ended.signal });
    // Progress is always asked for: a server reporting it keeps a long call alive even with nobody watching.
    const passOn = throttledProgress(ctx.onProgress ?? (() => {}));
    try {
      // The SDK's timeout is the hard maximum; the idle timeout is the clock's, which questions hold.
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: longest, signal: AbortSignal.any([signal, clock.signal]),
        onprogress: (progress) => {
          clock.touch();
          passOn(progress);
        },
      });
      return toToolResult(result as McpCallResult);
    } catch (err) {
      if (signal.aborted) return failure(`the call to ${tool} was cancelled before MCP server ${this.name} answered`);
      if (clock.expired) return failure(`MCP tool ${tool} on server ${this.name} timed out after ${timeoutMs} ms`);
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
        return failure(`MCP tool ${tool} on server ${this.name} was still working after ${longest} ms, the longest a call may take (maxCallMs)`);
      }
      if (client !== this.#client || isConnectionLoss(err)) {
        this.#lost(client, describe(err));
        return failure(`MCP server ${this.name} stopped during the call to ${tool}: ${this.lastError ?? describe(err)}`);
      }
      return failure(`MCP tool ${tool} on server ${this.name} failed: ${describe(err)}`);
    } finally {
      clock.stop();
      ended.abort();
      untrack();
    }
  }

  /** The result every tool of this server gives while it cannot be reached. */
  unavailable(): ToolResult {
    const reason = this.#closed ? "the bot is shutting down" : (this.lastError ?? `it is ${this.state}`);
    return failure(`MCP server ${this.name} is unavailable: ${reason}`);
  }

  /** Disconnects for good (stops retries and the server process). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const client = this.#client;
    this.#client = undefined;
    this.state = "stopped";
    await client?.close().catch(() => undefined);
    await this.#connecting;
  }

  async #attempt(): Promise<void> {
    this.state = "connecting";
    this.#stderrTail = [];
    const workspace = this.#workspace;
    const sampling = this.config.sampling?.enabled ? { maxTokens: this.config.sampling.maxTokens } : undefined;
    const client: Client = new Client(
      { name: "gatehouse", version: "0.1.0" },
      {
        capabilities: { ...(workspace ? { roots: { listChanged: false } } : {}), ...requestCapabilities(Boolean(sampling)) },
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (error || !tools || client !== this.#client) return;
              this.#setListing(tools.map(toListing));
              this.#log.info({ tools: this.listing.map((t) => t.name) }, "MCP server changed its tools");
            },
          },
        },
      },
    );
    if (workspace) {
      client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: pathToFileURL(workspace).href, name: "workspace" }] }));
    }
    handleServerRequests(client, { server: this.name, running: this.#running, sampling, log: this.#log });
    this.#client = client;
    client.onclose = () => this.#lost(client, this.#exitReason());
    const { transport, exitStatus } = createServerTransport(this.config, (text) => this.#keepStderr(text));
    this.#exitStatus = exitStatus;
    try {
      // Starting a server (an npx download, a cold process) may take longer than one call may.
      const startTimeout = Math.max(this.config.timeoutMs, MIN_START_TIMEOUT_MS);
      await client.connect(transport, { timeout: startTimeout });
      const tools = await listAllTools(client, startTimeout);
      if (this.#closed || client !== this.#client) return;
      this.#setListing(tools);
      this.state = "connected";
      this.lastError = undefined;
      this.#connectedAt = Date.now();
      this.#log.info({ transport: this.transport, tools: tools.map((t) => t.name) }, "MCP server connected");
    } catch (err) {
      // At start-up the server's last words usually say what is missing ("API key not set").
      const exited = exitStatus();
      const said = [exited ? `the server process ${exited}` : undefined, this.#stderrTail.at(-1)].filter(Boolean).join("; ");
      const reason = said ? `${describe(err)} (${said})` : describe(err);
      if (client === this.#client) this.#client = undefined;
      await client.close().catch(() => undefined);
      if (!this.#closed) this.#fail(reason);
    }
  }

  /** Kept for the reason of a failed start, and logged at debug level. */
  #keepStderr(text: string): void {
    for (const line of text.split("\n")) {
      const trimmed = scrubSecrets(line.trim()).slice(0, 300);
      if (!trimmed) continue;
      this.#stderrTail.push(trimmed);
      if (this.#stderrTail.length > STDERR_LINES_KEPT) this.#stderrTail.shift();
      this.#log.debug({ stderr: trimmed }, "MCP server stderr");
    }
  }

  /** A connected server went away (process exit, closed stream, network failure). */
  #lost(client: Client, reason: string): void {
    if (this.#closed || client !== this.#client || this.state !== "connected") return;
    this.#client = undefined;
    void client.close().catch(() => undefined);
    // A server that stayed up a while earns a fresh, short backoff; one that keeps dying does not.
    if (Date.now() - this.#connectedAt > this.#backoff.maxMs) this.#failures = 0;
    this.#fail(reason);
  }

  #fail(reason: string): void {
    this.state = "failed";
    this.lastError = reason;
    const delay = retryDelay(this.#failures, this.#backoff);
    this.#failures += 1;
    this.#log.warn({ transport: this.transport, error: reason, retryInMs: delay }, "MCP server unavailable");
    this.#retryTimer = setTimeout(() => void this.connect(), delay);
    this.#retryTimer.unref();
  }

  #setListing(tools: McpToolListing[]): void {
    this.listing = tools;
    this.onListingChanged?.();
  }

  /** Why a connected server went away: how its process ended, not what it last printed. */
  #exitReason(): string {
    if (this.transport !== "stdio") return "the connection closed";
    return `the server process ${this.#exitStatus() ?? "exited"}`;
  }
}

/** The wait before retry number `failures + 1`: initial, doubling, capped at max. */
export function retryDelay(failures: number, backoff: Backoff = DEFAULT_BACKOFF): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(failures, 30));
}

async function listAllTools(client: Client, timeoutMs: number): Promise<McpToolListing[]> {
  const tools: McpToolListing[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    tools.push(...page.tools.map(toListing));
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

function toListing(tool: { name: string; description?: string; inputSchema: object; annotations?: McpToolAnnotations }): McpToolListing {
  return { name: tool.name, description: tool.description, inputSchema: { ...tool.inputSchema }, ...(tool.annotations ? { annotations: { ...tool.annotations } } : {}) };
}

/** Errors that mean the transport is gone, as opposed to the server rejecting one call. */
function isConnectionLoss(err: unknown): boolean {
  if (err instanceof McpError) return err.code === ErrorCode.ConnectionClosed;
  return true;
}

function describe(err: unknown): string {
  if (err instanceof StreamableHTTPError && err.code !== undefined && err.code > 0) {
    return scrubSecrets(`HTTP ${err.code}: ${err.message.replace(/^Streamable HTTP error: /, "")}`.slice(0, 300));
  }
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
  const message = err instanceof Error ? `${err.message}${cause}` : String(err);
  return scrubSecrets(message.replace(/^MCP error -?\d+: /, "").slice(0, 300));
}

function failure(error: string): ToolResult {
  return { success: false, output: "", error };
}
