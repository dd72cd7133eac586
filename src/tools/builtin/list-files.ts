/**
 * `list_files`: what a workspace folder holds — each entry's name, type and size — so the
 * model can find files before reading them. Long folders are cut at a bounded count. The folder
 * is opened once (see workspace-file.ts) and listed through that descriptor.
 */
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Tool } from "../tool.ts";
import { failed, succeeded } from "../result.ts";
import { openWorkspaceFolder } from "../workspace-file.ts";
import { workspaceFor } from "../workspace-path.ts";
import { fileErrorResult } from "./file-errors.ts";

/** Options of `list_files`. */
export interface ListFilesOptions {
  /** Used when the call's context names no workspace. */
  workspace?: string;
  /** The most entries one call returns (default 200). */
  maxEntries?: number;
}

const DEFAULT_MAX_ENTRIES = 200;

/** Creates the `list_files` tool. */
export function listFilesTool(options: ListFilesOptions = {}): Tool<ListFilesArgs> {
  const cap = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const parameters = z.object({
    path: z.string().default(".").describe("folder relative to the workspace; the workspace root when omitted"),
    limit: z.number().int().min(1).max(cap).optional().describe(`most entries to return (at most ${cap})`),
  });
  return {
    name: "list_files",
    description: "Lists a folder in the workspace: one line per entry with its type (file, dir, link) and size in bytes.",
    parameters,
    risk: "read",
    replayable: true,
    owner: "builtin",
    hint: (args) => args.path || ".",
    async execute(args, ctx) {
      const shown = args.path || ".";
      let folder: Awaited<ReturnType<typeof openWorkspaceFolder>> | undefined;
      try {
        folder = await openWorkspaceFolder(workspaceFor(ctx, options.workspace), shown);
        const entries = await readdir(folder.path, { withFileTypes: true });
        if (entries.length === 0) return succeeded(`${folder.relative} is empty`);
        entries.sort((a, b) => a.name.localeCompare(b.name));
        const limit = Math.min(args.limit ?? cap, cap);
        const lines: string[] = [];
        for (const entry of entries.slice(0, limit)) {
          if (ctx.signal.aborted) return failed("cancelled");
          lines.push(await describeEntry(folder.path, entry));
        }
        const more = entries.length - limit;
        const header = `${folder.relative}: ${entries.length} entr${entries.length === 1 ? "y" : "ies"}`;
        const footer = more > 0 ? [`… and ${more} more (raise limit or list a subfolder)`] : [];
        return succeeded([header, ...lines, ...footer].join("\n"));
      } catch (err) {
        return fileErrorResult(err, shown);
      } finally {
        await folder?.handle.close();
      }
    },
  };
}

/** Arguments of `list_files`. */
export type ListFilesArgs = { path: string; limit?: number };

async function describeEntry(folder: string, entry: { name: string; isDirectory(): boolean; isSymbolicLink(): boolean }): Promise<string> {
  if (entry.isDirectory()) return `dir   ${"-".padStart(10)}  ${entry.name}/`;
  if (entry.isSymbolicLink()) return `link  ${"-".padStart(10)}  ${entry.name}`;
  const size = await lstat(path.join(folder, entry.name)).then((s) => String(s.size), () => "?");
  return `file  ${size.padStart(10)}  ${entry.name}`;
}
