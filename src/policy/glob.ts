/**
 * Tool name patterns. A pattern is a tool name where `*` matches any run of characters.
 * A pattern is tested against every id of a tool: its plain name, `builtin:<name>` for
 * built-ins, and `mcp:<name>` for MCP tools (whose names are `<server>__<tool>`), so
 * `mcp:github__*` covers one server and `mcp:*` every MCP tool.
 */

/** What the policy needs to know about a tool to match patterns against it. */
export interface ToolIdentity {
  name: string;
  /** `builtin` or `mcp:<server>`. */
  owner: string;
}

const compiled = new Map<string, RegExp>();

function compile(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    const body = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
    // `s`: a run of characters may span lines (a multi-line shell command, a file name with a newline).
    re = new RegExp(`^${body}$`, "s");
    compiled.set(pattern, re);
  }
  return re;
}

/** Whether `text` matches `pattern` (`*` is the only wildcard). */
export function globMatches(pattern: string, text: string): boolean {
  return compile(pattern).test(text);
}

/** Every id a pattern may name this tool by. */
export function toolIds(tool: ToolIdentity): string[] {
  const ids = [tool.name];
  if (tool.owner === "builtin") ids.push(`builtin:${tool.name}`);
  if (tool.owner.startsWith("mcp:")) {
    const server = tool.owner.slice("mcp:".length);
    ids.push(`mcp:${tool.name}`);
    // An MCP tool registered without its server prefix is still reachable as mcp:<server>__<tool>.
    if (!tool.name.startsWith(`${server}__`)) ids.push(`mcp:${server}__${tool.name}`);
  }
  return ids;
}

/** The first pattern in `patterns` that matches the tool, if any. */
export function firstMatchingPattern(patterns: readonly string[], tool: ToolIdentity): string | undefined {
  if (patterns.length === 0) return undefined;
  const ids = toolIds(tool);
  return patterns.find((p) => ids.some((id) => globMatches(p, id)));
}
