/**
 * The transport to one MCP server: a child process over stdio, or Streamable HTTP. The stdio
 * transport remembers how its process ended, so a server that dies is reported by its exit code or
 * signal rather than by whatever it last wrote to stderr (often its start-up banner).
 */
import type { ChildProcess } from "node:child_process";
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isStdioServer, type McpServerConfig } from "./schema.ts";

/** A stdio transport that records its process's exit. */
class ExitRecordingStdioTransport extends StdioClientTransport {
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(params: StdioServerParameters) {
    super(params);
  }

  override async start(): Promise<void> {
    await super.start();
    // The SDK keeps the child private; without it (another SDK version) the reason is only "exited".
    const child = Reflect.get(this, "_process") as ChildProcess | undefined;
    child?.once("exit", (code, signal) => {
      this.exit = { code, signal };
    });
  }
}

/** A transport and what it knows about how it ended. */
export interface ServerTransport {
  transport: Transport;
  /** "exited with code 3" / "was killed by SIGKILL", once a stdio server's process ended. */
  exitStatus(): string | undefined;
}

/** Creates the transport for `config`; stderr lines of a stdio server go to `onStderr`. */
export function createServerTransport(config: McpServerConfig, onStderr: (text: string) => void): ServerTransport {
  if (!isStdioServer(config)) {
    const transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} } });
    return { transport, exitStatus: () => undefined };
  }
  const transport = new ExitRecordingStdioTransport({ command: config.command, args: config.args, env: config.env, cwd: config.cwd, stderr: "pipe" });
  transport.stderr?.on("data", (chunk: Buffer) => onStderr(chunk.toString("utf8")));
  return {
    transport,
    exitStatus: () => {
      const exit = transport.exit;
      if (!exit) return undefined;
      return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? "unknown"}`;
    },
  };
}
