/**
 * `write_file`: creates, overwrites or appends to a text file in the workspace, creating
 * missing parent folders (inside the workspace only). The file is opened once, each folder on the
 * way relative to the one before (see workspace-file.ts), and refused unless it is a regular file
 * with a single link; only then is it emptied and written.
 */
import { z } from "zod";
import type { Tool } from "../tool.ts";
import { failed, succeeded } from "../result.ts";
import { openWorkspaceFile } from "../workspace-file.ts";
import { resolveWorkspacePath, workspaceFor } from "../workspace-path.ts";
import { fileErrorResult } from "./file-errors.ts";

/** Options of `write_file`. */
export interface WriteFileOptions {
  /** Used when the call's context names no workspace. */
  workspace?: string;
  /** The most bytes one call may write (default 5 MB). */
  maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;

const parameters = z.object({
  path: z.string().min(1).describe("file path relative to the workspace; missing folders are created"),
  content: z.string().describe("the text to write"),
  append: z.boolean().default(false).describe("add to the end of the file instead of replacing it"),
});

/** Arguments of `write_file`. */
export type WriteFileArgs = z.infer<typeof parameters>;

/** Creates the `write_file` tool. */
export function writeFileTool(options: WriteFileOptions = {}): Tool<WriteFileArgs> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return {
    name: "write_file",
    description: "Writes a text file in the workspace (replacing it, or appending with append: true). Creates missing folders.",
    parameters,
    risk: "write",
    owner: "builtin",
    hint: (args) => (args.append ? `${args.path} (append)` : args.path),
    async check(args, ctx) {
      try {
        await resolveWorkspacePath(workspaceFor(ctx, options.workspace), args.path);
        return undefined;
      } catch (err) {
        return (err as Error).message;
      }
    },
    async execute(args, ctx) {
      const bytes = Buffer.byteLength(args.content);
      if (bytes > maxBytes) return failed(`content is ${bytes} bytes; write_file accepts at most ${maxBytes} per call (append in parts)`);
      let file: Awaited<ReturnType<typeof openWorkspaceFile>> | undefined;
      try {
        const workspace = workspaceFor(ctx, options.workspace);
        const target = await resolveWorkspacePath(workspace, args.path);
        if (target.relative === ".") return failed("a file path is needed, not the workspace folder itself");
        file = await openWorkspaceFile(workspace, args.path, args.append ? "append" : "write");
        if (args.append) await file.handle.appendFile(args.content);
        else await file.handle.writeFile(args.content, { signal: ctx.signal });
        return succeeded(`${args.append ? "appended" : "wrote"} ${bytes} bytes to ${file.relative}`);
      } catch (err) {
        return fileErrorResult(err, args.path);
      } finally {
        await file?.handle.close();
      }
    },
  };
}
