/**
 * The risk of an MCP tool, from the server's config first and the tool's own annotations second.
 * Annotations follow the MCP defaults: a tool not marked `readOnlyHint` may change things, and one
 * not marked `openWorldHint: false` reaches beyond the server (the web, other people's systems).
 * Only a read-only tool of a closed world runs without asking; a destructive or open-world tool is
 * "write", which the policy asks a person about by default. Nothing an annotation says makes a tool
 * "exec": that takes the config (`risk: "exec"` for a server that runs commands).
 */
import type { ToolRisk } from "../tool.ts";
import type { McpServerConfig } from "./schema.ts";

/** What a server says about a tool (MCP `ToolAnnotations`); hints, not guarantees. */
export interface McpToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  openWorldHint?: boolean;
  idempotentHint?: boolean;
  title?: string;
}

/** The risk of tool `tool` (the server's name for it; `modelName` the name the model sees). */
export function mcpToolRisk(config: McpServerConfig, tool: string, modelName: string, annotations: McpToolAnnotations | undefined): ToolRisk {
  const perTool = config.toolRisk[tool] ?? config.toolRisk[modelName];
  if (perTool) return perTool;
  if (config.readOnlyTools.includes(tool) || config.readOnlyTools.includes(modelName)) return "read";
  if (config.risk) return config.risk;
  if (config.readOnly) return "read";
  return annotatedRisk(annotations);
}

/** The risk the annotations alone give. */
export function annotatedRisk(annotations: McpToolAnnotations | undefined): ToolRisk {
  const readOnly = annotations?.readOnlyHint === true;
  const openWorld = annotations?.openWorldHint !== false;
  return readOnly && !openWorld ? "read" : "write";
}
