/** Small helpers shared by the MCP tests. */
import { fileURLToPath } from "node:url";
import { silentLogger } from "../../src/observe/logger.ts";
import type { AnyTool, ToolContext } from "../../src/tools/tool.ts";
import { McpConfigSchema, type McpConfig } from "../../src/tools/mcp/schema.ts";

/** The stdio fixture server's entry file. */
export const FIXTURE_SERVER = fileURLToPath(new URL("./fixtures/server.ts", import.meta.url));

/** Fast retries so recovery tests take milliseconds, not seconds. */
export const FAST_BACKOFF = { initialMs: 50, maxMs: 200 };

/** Parses a config the way the bot would (defaults filled in). */
export function mcpConfig(input: unknown): McpConfig {
  return McpConfigSchema.parse(input);
}

/** A tool context for calls made outside a turn. */
export function toolContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, workspace: process.cwd(), sessionKey: "console:test", senderId: "tester", log: silentLogger() };
}

/** Finds a tool by name or fails the test with the names that exist. */
export function toolNamed(tools: AnyTool[], name: string): AnyTool {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}; have ${tools.map((t) => t.name).join(", ")}`);
  return tool;
}

/** Polls until `check` holds, or throws after `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
