/**
 * Step 1 — availability. Owns which tools this turn offers: policy for this agent, sender and
 * conversation; the execution's excluded tools; MCP filter groups; deferred activation. The same
 * answer is used again before execution, so a tool not offered is never run.
 */
import type { ToolSpec } from "../model/types.ts";
import { toolAvailability } from "../policy/tool-policy.ts";
import { toolSpecOf } from "../tools/registry.ts";
import { visibleMcpTools } from "../tools/mcp/filter-groups.ts";
import { createToolSearchTool, deferredToolsPrompt } from "../tools/tool-search.ts";
import type { AnyTool } from "../tools/tool.ts";
import type { ResolvedExecution, TurnState } from "./types.ts";

export interface Availability {
  /** Tools offered to the model this request, by name. */
  offered: Map<string, AnyTool>;
  specs: ToolSpec[];
  /** Why a tool that exists is not offered (policy rule, exclusion, filter group, not activated). */
  refusals: Map<string, { rule: string; byPolicy: boolean }>;
  /** A line for the system prompt listing deferred MCP tools, when deferred activation is on. */
  deferredPrompt?: string;
  /** The catalog it was computed from. */
  catalog: AnyTool[];
}

const isMcp = (tool: AnyTool) => tool.owner.startsWith("mcp:");

/** OpenAI's limit on the tools of one request (other OpenAI-compatible servers take at least as few). */
const MAX_TOOLS_PER_REQUEST = 128;
/** The cap is said once per process, not at every request. */
let cappedWarned = false;

/** Computes the tools offered for the next model request of this turn. */
export function computeAvailability(exec: ResolvedExecution, state: TurnState): Availability {
  const env = state.envelope;
  const subject = { channel: env.channel, senderId: env.sender.id, conversationId: env.conversation.id };
  const offered = new Map<string, AnyTool>();
  const refusals = new Map<string, { rule: string; byPolicy: boolean }>();
  const all = exec.catalog();
  const activation = exec.activation;
  const visible = activation?.filterGroups.length
    ? visibleMcpTools(all.filter(isMcp), activation.filterGroups, env.text)
    : undefined;
  const deferred: AnyTool[] = [];

  for (const tool of all) {
    if (exec.knobs.excludedTools.includes(tool.name)) {
      refusals.set(tool.name, { rule: "excluded for this agent", byPolicy: true });
      continue;
    }
    const decision = toolAvailability(exec.policy.tools, exec.policy.approval, tool, subject);
    if (!decision.offered) {
      refusals.set(tool.name, { rule: decision.rule, byPolicy: true });
      continue;
    }
    if (isMcp(tool) && visible && !visible.has(tool.name)) {
      refusals.set(tool.name, { rule: "mcp.filterGroups (no group offers it for this message)", byPolicy: true });
      continue;
    }
    if (isMcp(tool) && activation?.deferred && !activation.isActive(state.sessionKey, tool.name)) {
      refusals.set(tool.name, { rule: "not activated yet: call tool_search to activate it", byPolicy: false });
      deferred.push(tool);
      continue;
    }
    offered.set(tool.name, tool);
  }
  // The endpoint refuses a request with more tools than it takes: MCP tools past the limit wait.
  if (offered.size > MAX_TOOLS_PER_REQUEST) {
    const over = [...offered.values()].filter(isMcp).slice(-(offered.size - MAX_TOOLS_PER_REQUEST));
    for (const tool of over) {
      offered.delete(tool.name);
      refusals.set(tool.name, { rule: `more than ${MAX_TOOLS_PER_REQUEST} tools (the model endpoint's limit per request): use mcp.deferred or mcp.filterGroups`, byPolicy: false });
    }
    if (!cappedWarned) {
      cappedWarned = true;
      exec.log.warn({ offered: offered.size, left: over.map((t) => t.name) }, `more tools than a model request takes (${MAX_TOOLS_PER_REQUEST}); the last MCP tools are not offered — set mcp.deferred or mcp.filterGroups`);
    }
  }
  // tool_search is made per turn over exactly the deferred tools this sender may activate.
  if (activation?.deferred && deferred.length) {
    const search = createToolSearchTool({
      catalog: () => deferred,
      isAllowed: () => true,
      activate: (names, sessionKey) => activation.activate(sessionKey, names),
    });
    const decision = toolAvailability(exec.policy.tools, exec.policy.approval, search, subject);
    if (decision.offered) offered.set(search.name, search);
    else refusals.set(search.name, { rule: decision.rule, byPolicy: true });
  }
  return {
    offered,
    specs: [...offered.values()].map(toolSpecOf),
    refusals,
    deferredPrompt: deferred.length ? deferredToolsPrompt(deferred) : undefined,
    catalog: all,
  };
}

/**
 * The availability for the turn's next request: `previous` (the turn's last one) again while
 * nothing it was computed from changed — the same tools in the catalog, and no deferred activation
 * (tool_search changes what a session has activated). Policy, sender and message stay for a turn.
 */
export function availabilityAgain(exec: ResolvedExecution, state: TurnState, previous: Availability | undefined): Availability {
  if (previous && !exec.activation?.deferred) {
    const all = exec.catalog();
    if (all.length === previous.catalog.length && all.every((tool, i) => tool === previous.catalog[i])) return previous;
  }
  return computeAvailability(exec, state);
}
