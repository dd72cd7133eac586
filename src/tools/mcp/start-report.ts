/**
 * What the person at the console is told when it opens: one line per MCP server that failed to
 * start, with its reason (the log and `gatehouse status` have the details). The server is still
 * retried in the background; until it connects its tools answer "unavailable".
 */
import type { McpServerStatus } from "./hub.ts";

const REASON_MAX = 200;

/** `⚠ MCP server "github" did not start: <reason>; its tools are unavailable.`, per failed server. */
export function startFailureLines(servers: McpServerStatus[]): string[] {
  return servers
    .filter((s) => s.state === "failed")
    .map((s) => `⚠ MCP server "${s.name}" did not start: ${reasonOf(s.lastError)}; its tools are unavailable.`);
}

/** The reason without the SDK's wrapper: "Connection closed (the server process exited with code 1)" says it in the brackets. */
function reasonOf(error: string | undefined): string {
  const said = (error ?? "unknown reason").replace(/\s+/g, " ").trim();
  const inner = /^(?:MCP error -?\d+: )?Connection closed \((.+)\)$/.exec(said)?.[1] ?? said;
  return inner.length > REASON_MAX ? `${inner.slice(0, REASON_MAX - 1)}…` : inner;
}
