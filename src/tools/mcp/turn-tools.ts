/**
 * Which MCP tools one turn offers, in one place: filter groups first (what this message may
 * see), then policy, then deferred activation (only names plus `tool_search` until the model
 * activates tools, which are then offered from its next request and for the rest of the session).
 */
import type { AnyTool } from "../tool.ts";
import { createToolSearchTool, deferredToolsPrompt } from "../tool-search.ts";
import type { McpActivation } from "./activation.ts";
import { visibleMcpTools } from "./filter-groups.ts";
import { isMcpTool } from "./mcp-tool.ts";
import type { McpConfig } from "./schema.ts";

/** What the engine needs to offer and check MCP tools during one turn. */
export interface McpTurnTools {
  /** MCP tools to offer in the next model request (with `tool_search` when deferred); ask again before each request. */
  offered(): AnyTool[];
  /** Lines for the system prompt naming the deferred tools ("" when nothing is deferred). */
  prompt: string;
  /** Whether the model may call this MCP tool now; false means refuse the call, and `refusal` says why. */
  mayCall(name: string): boolean;
  /** The reason to give the model for a call `mayCall` refused. */
  refusal(name: string): string;
}

/** Inputs for `mcpTurnTools`. */
export interface McpTurnInput {
  /** Every MCP tool the hub knows (`hub.tools()`); other tools are ignored. */
  tools: AnyTool[];
  config: Pick<McpConfig, "deferred" | "filterGroups">;
  activation: McpActivation;
  sessionKey: string;
  /** The person's message, for dynamic filter groups. */
  messageText: string;
  /** Policy's verdict for this agent, sender and turn. */
  isAllowed: (tool: AnyTool) => boolean;
}

/** Works out the MCP tools of one turn. */
export function mcpTurnTools(input: McpTurnInput): McpTurnTools {
  const visibleNames = visibleMcpTools(input.tools, input.config.filterGroups, input.messageText);
  const visible = input.tools.filter((t) => isMcpTool(t) && visibleNames.has(t.name) && input.isAllowed(t));
  const offerable = new Set(visible.map((t) => t.name));
  const refusal = (name: string) =>
    offerable.has(name) ? `${name} is not active yet: call tool_search with "select:${name}" first` : `${name} is not available for this message`;
  if (!input.config.deferred) {
    return { offered: () => visible, prompt: "", mayCall: (name) => offerable.has(name), refusal };
  }
  const search = createToolSearchTool({
    catalog: () => visible,
    isAllowed: input.isAllowed,
    activate: (names, sessionKey) => input.activation.activate(sessionKey, names),
  });
  const active = () => input.activation.active(input.sessionKey);
  return {
    offered: () => [search, ...visible.filter((t) => active().has(t.name))],
    prompt: deferredToolsPrompt(visible.filter((t) => !active().has(t.name))),
    mayCall: (name) => offerable.has(name) && active().has(name),
    refusal,
  };
}
