/**
 * `read_file`: a text file from the workspace, whole or by line range. Output is capped so a
 * large file cannot flood the conversation; the cap is stated, with how to read further. The file
 * is opened once (see workspace-file.ts) and read through that descriptor, in chunks that stop
 * when the turn is cancelled.
 */
import type { FileHandle } from "node:fs/promises";
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

/**
 * Lines `startLine`..`endLine`, scanned in chunks straight from the file: no more than the cap is
 * ever held, so a file that is one enormous line (minified JSON, a log without newlines) is read
 * as safely as a short one. A single line over the cap is returned cut, and says so.
 */
async function readLines(handle: FileHandle, args: ReadFileArgs, maxBytes: number, signal: AbortSignal): Promise<ToolResult> {
  const start = args.startLine ?? 1;
  const end = args.endLine ?? Number.POSITIVE_INFINITY;
  const chunk = Buffer.allocUnsafe(CHUNK);
  const out = Buffer.allocUnsafe(maxBytes);
  let used = 0;
  let lineStartsAt = 0;
  let lineNo = 1;
  let picked = 0;
  let position = 0;
  let lastByte = 10;
  let overflow: "between-lines" | "within-line" | undefined;
  scan: for (;;) {
    signal.throwIfAborted();
    const { bytesRead } = await handle.read(chunk, 0, CHUNK, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    lastByte = chunk[bytesRead - 1]!;
    const data = chunk.subarray(0, bytesRead);
    let from = 0;
    while (from < data.length) {
      if (lineNo > end) break scan;
      const newline = data.indexOf(10, from);
      const stop = newline === -1 ? data.length : newline;
      if (lineNo >= start) {
        const room = maxBytes - used;
        if (stop - from > room || (newline !== -1 && stop - from === room)) {
          if (picked > 0) {
            overflow = "between-lines";
            used = lineStartsAt;
          } else {
            overflow = "within-line";
            let take = Math.min(room, stop - from);
            while (take > 0 && (data[from + take]! & 0xc0) === 0x80) take--;
            data.copy(out, used, from, from + take);
            used += take;
          }
          break scan;
        }
        data.copy(out, used, from, stop);
        used += stop - from;
      }
      if (newline === -1) break;
      if (lineNo >= start) {
        out[used++] = 10;
        picked++;
        lineStartsAt = used;
      }
      lineNo++;
      from = newline + 1;
    }
  }
  signal.throwIfAborted();
  if (overflow === undefined && lastByte !== 10 && lineNo >= start && lineNo <= end) picked++;
  const total = lastByte === 10 ? lineNo - 1 : lineNo;
  if (picked === 0 && overflow === undefined) return failed(`${args.path} has only ${total} lines; startLine ${start} is past the end`);
  const text = out.toString("utf8", 0, used).replace(/\r?\n$/, "").replace(/\r\n/g, "\n");
  if (overflow === "between-lines") return succeeded(`${text}\n[output cap of ${maxBytes} bytes reached; continue with startLine ${lineNo}]`);
  if (overflow === "within-line") {
    return succeeded(`${text}\n[line ${lineNo} is longer than the output cap of ${maxBytes} bytes; showing its first ${used} bytes. Continue with startLine ${lineNo + 1}, or use the shell to read inside the line]`);
  }
  return succeeded(text);
}

/** A NUL byte in the first few KB marks a binary file, as `grep` and `git` decide it. */
async function looksBinary(handle: FileHandle): Promise<boolean> {
  const probe = Buffer.alloc(8192);
  const { bytesRead } = await handle.read(probe, 0, probe.length, 0);
  return probe.subarray(0, bytesRead).includes(0);
}
