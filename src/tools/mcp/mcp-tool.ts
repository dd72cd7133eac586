/**
 * Wraps one tool an MCP server lists as a Gatehouse Tool: named `<server>__<tool>`, owned by
 * `mcp:<server>`, offered to the model with the server's own JSON schema (repaired where endpoints refuse it, offered-schema.ts), with a risk from the
 * config or else the tool's annotations (risk.ts), its progress reports passed to the call's
 * progress line, and the server's questions and sampling requests passed to the call's turn.
 */
import { z } from "zod";
import type { AnyTool, ToolContext } from "../tool.ts";
import type { McpServerConnection, McpToolListing } from "./connection.ts";
import { offeredSchema } from "./offered-schema.ts";
import { mcpToolRisk } from "./risk.ts";

/** Separates server and tool in an MCP tool's name. */
export const MCP_NAME_SEPARATOR = "__";

/** OpenAI-compatible endpoints accept function names of at most 64 characters from this set. */
const MODEL_NAME_LIMIT = 64;

/** The name the model sees for tool `tool` of server `server`. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}${MCP_NAME_SEPARATOR}${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, MODEL_NAME_LIMIT);
}

/** True for tools that come from an MCP server. */
export function isMcpTool(tool: AnyTool): boolean {
  return tool.owner.startsWith("mcp:");
}

// Arguments are checked by the server against its own schema; this only insists on an object.
const mcpArguments = z.looseObject({});

/** Builds the Tool for one listed MCP tool; calls go through `connection`. */
export function createMcpTool(connection: McpServerConnection, listing: McpToolListing): AnyTool {
  const name = mcpToolName(connection.name, listing.name);
  // Either spelling is accepted in the config: the server's tool name or the name the model sees.
  const risk = mcpToolRisk(connection.config, listing.name, name, listing.annotations);
  return {
    name,
    description: listing.description?.trim() || `Tool ${listing.name} of MCP server ${connection.name}.`,
    parameters: mcpArguments,
    jsonSchema: offeredSchema(listing.inputSchema),
    risk,
    owner: `mcp:${connection.name}`,
    hint: (args: Record<string, unknown>) => shortHint(args),
    execute: (args: Record<string, unknown>, ctx: ToolContext) => connection.call(listing.name, args ?? {}, ctx),
  };
}

function shortHint(args: Record<string, unknown>): string {
  const text = JSON.stringify(args ?? {});
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
