/**
 * Filter groups narrow which MCP tools a turn may see: `always` groups every turn, `dynamic`
 * groups only when the person's message contains one of their keywords. Once any group is
 * configured, an MCP tool that no active group matches is hidden — and the engine refuses it
 * if the model calls it anyway.
 */
import type { AnyTool } from "../tool.ts";
import { isMcpTool } from "./mcp-tool.ts";
import type { FilterGroup } from "./schema.ts";

/** Names of the MCP tools visible this turn (every MCP tool when no group is configured). */
export function visibleMcpTools(tools: AnyTool[], groups: FilterGroup[], messageText: string): Set<string> {
  const mcpTools = tools.filter(isMcpTool);
  if (groups.length === 0) return new Set(mcpTools.map((t) => t.name));
  const active = groups.filter((g) => g.mode === "always" || g.keywords.some((k) => mentionsKeyword(messageText, k)));
  const patterns = active.flatMap((g) => g.tools.map(globToRegExp));
  const visible = new Set<string>();
  for (const tool of mcpTools) {
    const id = `mcp:${tool.name}`;
    if (patterns.some((p) => p.test(tool.name) || p.test(id))) visible.add(tool.name);
  }
  return visible;
}

/** `*` matches any run of characters, `?` one character; matching ignores case. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .split("")
    .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`, "i");
}

/** A keyword counts as a whole word (or phrase), so "git" does not fire on "digital". */
function mentionsKeyword(text: string, keyword: string): boolean {
  const escaped = keyword.trim().replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  if (!escaped) return false;
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, "iu").test(text);
}
