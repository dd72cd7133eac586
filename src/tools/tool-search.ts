/**
 * `tool_search`: with deferred MCP activation the model first sees only tool names; it finds
 * tools by keyword (or names them with `select:a,b`) and the matches are offered from its next
 * request on. Policy filters the catalog first, so a denied tool is never shown or activated.
 */
import { z } from "zod";
import type { AnyTool, Tool } from "./tool.ts";

/** What `tool_search` needs from the engine. */
export interface ToolSearchOptions {
  /** Every deferred tool that could be activated. */
  catalog: () => AnyTool[];
  /** Policy's verdict for this sender and turn; false hides the tool completely. */
  isAllowed: (tool: AnyTool) => boolean;
  /** Makes tools available from the next model request; `sessionKey` says whose session. */
  activate: (names: string[], sessionKey: string) => void;
}

const DEFAULT_MAX = 5;
const MAX_RESULTS = 20;
const DESCRIPTION_CHARS = 200;
const STOP_WORDS = new Set(["a", "an", "and", "the", "to", "of", "for", "in", "on", "or", "with", "tool", "tools", "me", "my", "i"]);

const ToolSearchArgs = z.object({
  query: z.string().trim().min(1).describe('Keywords describing the tools you need, or "select:name1,name2" to activate tools by exact name.'),
  max: z.number().int().min(1).max(MAX_RESULTS).optional().describe(`How many tools to return (default ${DEFAULT_MAX}).`),
});
type ToolSearchArgs = z.infer<typeof ToolSearchArgs>;

/** Builds the `tool_search` tool (risk read, owner builtin). */
export function createToolSearchTool(options: ToolSearchOptions): Tool<ToolSearchArgs> {
  return {
    name: "tool_search",
    description:
      "Find and activate tools that are available on request. Search by keywords (e.g. \"read file\"), " +
      'or activate exact tools with "select:name1,name2". Activated tools can be called from your next step.',
    parameters: ToolSearchArgs,
    risk: "read",
    replayable: true,
    owner: "builtin",
    hint: (args) => args.query.slice(0, 60),
    async execute(args, ctx) {
      const allowed = options.catalog().filter(options.isAllowed);
      const max = args.max ?? DEFAULT_MAX;
      const query = args.query.trim();
      if (/^select:/i.test(query)) return select(allowed, query.slice("select:".length), options, ctx.sessionKey);
      const matches = rankTools(allowed, query, max);
      if (matches.length === 0) {
        return { success: true, output: `No tools match "${query}". ${nameList(allowed)}` };
      }
      options.activate(matches.map((t) => t.name), ctx.sessionKey);
      return { success: true, output: activatedText(matches) };
    },
  };
}

function select(allowed: AnyTool[], list: string, options: ToolSearchOptions, sessionKey: string) {
  const byName = new Map(allowed.map((t) => [t.name, t]));
  const wanted = [...new Set(list.split(",").map((n) => n.trim().replace(/^mcp:/, "")).filter(Boolean))];
  const found = wanted.map((n) => byName.get(n)).filter((t): t is AnyTool => t !== undefined);
  const missing = wanted.filter((n) => !byName.has(n));
  const missingText = missing.length ? `Not available: ${missing.join(", ")}. ${nameList(allowed)}` : "";
  if (found.length === 0) {
    const error = wanted.length ? missingText : `Name at least one tool after "select:". ${nameList(allowed)}`;
    return { success: false, output: "", error };
  }
  options.activate(found.map((t) => t.name), sessionKey);
  return { success: true, output: [activatedText(found), missingText].filter(Boolean).join("\n") };
}

/** Ranks tools by how well their name and description match the query's keywords; best first, at most `max`. */
export function rankTools(tools: AnyTool[], query: string, max: number): AnyTool[] {
  const terms = keywords(query);
  const whole = query.trim().toLowerCase();
  if (terms.length === 0) return [];
  return tools
    .map((tool) => ({ tool, score: score(tool, terms, whole) }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.tool.name.localeCompare(b.tool.name))
    .slice(0, Math.max(0, max))
    .map((s) => s.tool);
}

/** The short list of deferred tool names for the system prompt ("" when there are none). */
export function deferredToolsPrompt(tools: AnyTool[]): string {
  if (tools.length === 0) return "";
  const names = tools.map((t) => t.name).sort();
  return (
    `More tools are available on request: ${names.join(", ")}.\n` +
    'To use them, call tool_search with keywords, or with "select:name1,name2" to activate exact tools; ' +
    "they can be called from your next step."
  );
}

function score(tool: AnyTool, terms: string[], whole: string): number {
  const name = tool.name.toLowerCase();
  const nameWords = keywords(tool.name);
  const descriptionWords = keywords(tool.description);
  let total = name === whole ? 10 : 0;
  for (const term of terms) {
    if (nameWords.includes(term)) total += 4;
    else if (name.includes(term)) total += 2;
    if (descriptionWords.includes(term)) total += 1;
    else if (term.length >= 4 && descriptionWords.some((w) => w.startsWith(term))) total += 0.5;
  }
  return total;
}

/** Lower-cased words of a name or text, split on punctuation and `_`, plurals folded, filler dropped. */
function keywords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0 && !STOP_WORDS.has(w))
    .map((w) => (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w));
}

function activatedText(tools: AnyTool[]): string {
  const lines = tools.map((t) => `- ${t.name}: ${firstLine(t.description)}`);
  const noun = tools.length === 1 ? "tool is" : "tools are";
  return `${tools.length} ${noun} now available (call them from your next step):\n${lines.join("\n")}`;
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > DESCRIPTION_CHARS ? `${line.slice(0, DESCRIPTION_CHARS - 3)}...` : line;
}

function nameList(tools: AnyTool[]): string {
  if (tools.length === 0) return "No tools can be activated here.";
  const names = tools.map((t) => t.name).sort();
  const shown = names.slice(0, 30).join(", ");
  return `Tools you can activate: ${shown}${names.length > 30 ? `, and ${names.length - 30} more` : ""}.`;
}
