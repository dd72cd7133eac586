/**
 * Small constructors for tool results, so every built-in reports success and failure the
 * same way: on failure the message is both the output the model reads and the error the
 * progress line shows.
 */
import type { ToolResult } from "./tool.ts";

/** A successful result; empty output is left for the engine to show as "(no output)". */
export function succeeded(output: string): ToolResult {
  return { success: true, output };
}

/** A failed result whose message tells the model what went wrong and, where it can, what to do. */
export function failed(message: string, output: string = message): ToolResult {
  return { success: false, output, error: message };
}
