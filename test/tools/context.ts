/** Builds the ToolContext a turn would pass, around a fresh temporary workspace. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { silentLogger } from "../../src/observe/logger.ts";
import type { ToolContext } from "../../src/tools/tool.ts";

/** A context for one call; pass a signal to test cancellation. */
export function contextFor(workspace: string, signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, workspace, sessionKey: "console:test", senderId: "tester", log: silentLogger() };
}

/** A temporary folder holding `workspace/` (the tools' root) and `outside/` (somewhere they must not reach). */
export async function makeSandbox(): Promise<{ base: string; workspace: string; outside: string; cleanup(): Promise<void> }> {
  const base = await mkdtemp(path.join(tmpdir(), "gatehouse-tools-"));
  const workspace = path.join(base, "workspace");
  const outside = path.join(base, "outside");
  const { mkdir } = await import("node:fs/promises");
  await mkdir(workspace);
  await mkdir(outside);
  return { base, workspace, outside, cleanup: () => rm(base, { recursive: true, force: true }) };
}
