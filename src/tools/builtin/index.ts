/**
 * The built-in tools, built from one options object: the composition root registers these
 * next to the MCP tools.
 */
import type { AnyTool } from "../tool.ts";
import { currentTimeTool } from "./current-time.ts";
import { httpFetchTool, type HttpFetchOptions } from "./http-fetch.ts";
import { listFilesTool } from "./list-files.ts";
import { readFileTool } from "./read-file.ts";
import { shellTool, type ShellOptions } from "./shell.ts";
import { writeFileTool } from "./write-file.ts";

/** Settings of the built-in tools. */
export interface BuiltinToolsOptions {
  /** The folder file and shell tools work in (used when a call's context names none). */
  workspace: string;
  http?: HttpFetchOptions;
  shell?: Omit<ShellOptions, "workspace">;
  files?: { maxReadBytes?: number; maxWriteBytes?: number; maxListEntries?: number };
}

/** Every built-in tool: current_time, list_files, read_file, write_file, http_fetch, shell. */
export function builtinTools(options: BuiltinToolsOptions): AnyTool[] {
  const { workspace, files = {} } = options;
  return [
    currentTimeTool(),
    listFilesTool({ workspace, maxEntries: files.maxListEntries }),
    readFileTool({ workspace, maxBytes: files.maxReadBytes }),
    writeFileTool({ workspace, maxBytes: files.maxWriteBytes }),
    httpFetchTool(options.http),
    shellTool({ ...options.shell, workspace }),
  ];
}

export { currentTimeTool, httpFetchTool, listFilesTool, readFileTool, shellTool, writeFileTool };
export type { HttpFetchOptions, ShellOptions };
