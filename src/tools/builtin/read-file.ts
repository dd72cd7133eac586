/**
 * `read_file`: a text file from the workspace, whole or by line range. Output is capped so a
 * large file cannot flood the conversation; the cap is stated, with how to read further. The file
 * is opened once (see workspace-file.ts) and read through that descriptor, in chunks that stop
 * when the turn is cancelled.
 */
import type { FileHandle } from "node:fs/promises";
import { createInterface } from "node:readline";
import { z } from "zod";
import type { Tool, ToolResult } from "../tool.ts";
import { failed, succeeded } from "../result.ts";
import { openWorkspaceFile } from "../workspace-file.ts";
import { workspaceFor } from "../workspace-path.ts";
import { fileErrorResult } from "./file-errors.ts";

/** Options of `read_file`. */
export interface ReadFileOptions {
  /** Used when the call's context names no workspace. */
  workspace?: string;
  /** The most bytes one call returns (default 200 KB). */
  maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 200 * 1024;

const parameters = z
  .object({
    path: z.string().min(1).describe("file path relative to the workspace"),
    startLine: z.number().int().min(1).optional().describe("first line to return, counting from 1"),
    endLine: z.number().int().min(1).optional().describe("last line to return (inclusive)"),
  })
  .refine((a) => a.startLine === undefined || a.endLine === undefined || a.endLine >= a.startLine, {
    message: "endLine must not be before startLine",
    path: ["endLine"],
  });

/** Arguments of `read_file`. */
export type ReadFileArgs = z.infer<typeof parameters>;

/** Creates the `read_file` tool. */
export function readFileTool(options: ReadFileOptions = {}): Tool<ReadFileArgs> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return {
    name: "read_file",
    description: `Reads a text file in the workspace. Returns at most ${Math.round(maxBytes / 1024)} KB; pass startLine/endLine to read part of a larger file.`,
    parameters,
    risk: "read",
    replayable: true,
    owner: "builtin",
    hint: (args) => (args.startLine || args.endLine ? `${args.path}:${args.startLine ?? 1}-${args.endLine ?? ""}` : args.path),
    async execute(args, ctx) {
      let file: Awaited<ReturnType<typeof openWorkspaceFile>> | undefined;
      try {
        file = await openWorkspaceFile(workspaceFor(ctx, options.workspace), args.path, "read");
        if (await looksBinary(file.handle)) return failed(`${args.path} is a binary file (${file.size} bytes); only text files can be read`);
        if (args.startLine !== undefined || args.endLine !== undefined) {
          return await readLines(file.handle, args, maxBytes, ctx.signal);
        }
        return await readHead(file.handle, file.size, maxBytes, args.path, ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) return failed(`cancelled while reading ${args.path}`);
        return fileErrorResult(err, args.path);
      } finally {
        await file?.handle.close();
      }
    },
  };
}

/** Bytes read per step; the turn's signal is checked between steps. */
const CHUNK = 64 * 1024;

async function readHead(handle: FileHandle, size: number, maxBytes: number, shown: string, signal: AbortSignal): Promise<ToolResult> {
  const buffer = Buffer.alloc(Math.min(size, maxBytes));
  let bytesRead = 0;
  while (bytesRead < buffer.length) {
    signal.throwIfAborted();
    const step = await handle.read(buffer, bytesRead, Math.min(CHUNK, buffer.length - bytesRead), bytesRead);
    if (step.bytesRead === 0) break;
    bytesRead += step.bytesRead;
  }
  const text = new TextDecoder("utf-8").decode(buffer.subarray(0, bytesRead), { stream: bytesRead < size });
  if (size <= maxBytes) return succeeded(text);
  return succeeded(`${text}\n[${shown} is ${size} bytes; showing the first ${bytesRead}. Pass startLine/endLine to read further.]`);
}

async function readLines(handle: FileHandle, args: ReadFileArgs, maxBytes: number, signal: AbortSignal): Promise<ToolResult> {
  const start = args.startLine ?? 1;
  const end = args.endLine ?? Number.POSITIVE_INFINITY;
  const stream = handle.createReadStream({ encoding: "utf8", signal, start: 0, autoClose: false, highWaterMark: CHUNK });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  const picked: string[] = [];
  let bytes = 0;
  let lineNo = 0;
  let cutAt: number | undefined;
  try {
    for await (const line of lines) {
      lineNo++;
      if (lineNo < start) continue;
      if (lineNo > end) break;
      bytes += Buffer.byteLength(line) + 1;
      if (bytes > maxBytes) {
        cutAt = lineNo;
        break;
      }
      picked.push(line);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  signal.throwIfAborted();
  if (picked.length === 0 && cutAt === undefined) return failed(`${args.path} has only ${lineNo} lines; startLine ${start} is past the end`);
  const text = picked.join("\n");
  if (cutAt !== undefined) return succeeded(`${text}\n[output cap of ${maxBytes} bytes reached; continue with startLine ${cutAt}]`);
  return succeeded(text);
}

/** A NUL byte in the first few KB marks a binary file, as `grep` and `git` decide it. */
async function looksBinary(handle: FileHandle): Promise<boolean> {
  const probe = Buffer.alloc(8192);
  const { bytesRead } = await handle.read(probe, 0, probe.length, 0);
  return probe.subarray(0, bytesRead).includes(0);
}
