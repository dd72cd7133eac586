import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listFilesTool } from "../../src/tools/builtin/list-files.ts";
import { readFileTool } from "../../src/tools/builtin/read-file.ts";
import { writeFileTool } from "../../src/tools/builtin/write-file.ts";
import { validateArgs } from "../../src/tools/registry.ts";
import type { AnyTool } from "../../src/tools/tool.ts";
import { contextFor, makeSandbox } from "./context.ts";

let box: Awaited<ReturnType<typeof makeSandbox>>;
beforeEach(async () => {
  box = await makeSandbox();
});
afterEach(async () => {
  await box.cleanup();
});

/** Runs a tool the way the engine does: validate, then execute. */
async function call(tool: AnyTool, args: unknown) {
  const checked = validateArgs(tool, args);
  if (!checked.ok) throw new Error(checked.error);
  return tool.execute(checked.value, contextFor(box.workspace));
}

describe("write_file", () => {
  it("creates missing parent folders inside the workspace", async () => {
    const result = await call(writeFileTool(), { path: "reports/2025/q1.md", content: "# Q1\n" });
    expect(result).toMatchObject({ success: true, output: `wrote 5 bytes to ${path.join("reports", "2025", "q1.md")}` });
    expect(await readFile(path.join(box.workspace, "reports/2025/q1.md"), "utf8")).toBe("# Q1\n");
  });

  it("overwrites by default and appends when asked", async () => {
    await call(writeFileTool(), { path: "log.txt", content: "one\n" });
    await call(writeFileTool(), { path: "log.txt", content: "two\n" });
    await call(writeFileTool(), { path: "log.txt", content: "three\n", append: true });
    expect(await readFile(path.join(box.workspace, "log.txt"), "utf8")).toBe("two\nthree\n");
  });

  it("refuses to write outside the workspace with ../", async () => {
    const result = await call(writeFileTool(), { path: "../outside/pwned.txt", content: "x" });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^path escapes the workspace: \.\.\/outside\/pwned\.txt/);
    await expect(readFile(path.join(box.outside, "pwned.txt"))).rejects.toThrow();
  });

  it("refuses to write through a symlinked folder that points outside, creating nothing there", async () => {
    await symlink(box.outside, path.join(box.workspace, "shared"));
    const result = await call(writeFileTool(), { path: "shared/sub/pwned.txt", content: "x" });
    expect(result.error).toMatch(/path escapes the workspace/);
    await expect(readFile(path.join(box.outside, "sub", "pwned.txt"))).rejects.toThrow();
  });

  it("refuses content over its size limit", async () => {
    const result = await call(writeFileTool({ maxBytes: 10 }), { path: "big.txt", content: "x".repeat(11) });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/at most 10/);
  });
});

describe("read_file", () => {
  it("returns a text file's content", async () => {
    await writeFile(path.join(box.workspace, "hello.txt"), "hello\nworld\n");
    expect(await call(readFileTool(), { path: "hello.txt" })).toEqual({ success: true, output: "hello\nworld\n" });
  });

  it("says clearly when the file does not exist", async () => {
    const result = await call(readFileTool(), { path: "missing.txt" });
    expect(result).toMatchObject({ success: false, error: "not found: missing.txt (list_files shows what exists)" });
  });

  it("returns only the asked line range", async () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n");
    await writeFile(path.join(box.workspace, "ten.txt"), lines);
    const result = await call(readFileTool(), { path: "ten.txt", startLine: 3, endLine: 5 });
    expect(result.output).toBe("line 3\nline 4\nline 5");
  });

  it("cuts a file over the size cap and says how to read further", async () => {
    await writeFile(path.join(box.workspace, "big.txt"), "a".repeat(5000));
    const result = await call(readFileTool({ maxBytes: 1000 }), { path: "big.txt" });
    expect(result.success).toBe(true);
    expect(result.output.startsWith("a".repeat(1000) + "\n")).toBe(true);
    expect(result.output).toMatch(/big\.txt is 5000 bytes; showing the first 1000\. Pass startLine\/endLine/);
  });

  it("reads from a file that is one enormous line: the head of the line, and where to go next", async () => {
    await writeFile(path.join(box.workspace, "minified.json"), `{"a":"${"é".repeat(4_000_000)}"}\nsecond line\n`);
    const result = await call(readFileTool({ maxBytes: 1001 }), { path: "minified.json", startLine: 1, endLine: 2 });
    expect(result.success).toBe(true);
    const [head, note] = result.output.split("\n");
    expect(head).toBe(`{"a":"${"é".repeat(497)}`);
    expect(note).toBe("[line 1 is longer than the output cap of 1001 bytes; showing its first 1000 bytes. Continue with startLine 2, or use the shell to read inside the line]");
    expect(await call(readFileTool({ maxBytes: 1001 }), { path: "minified.json", startLine: 2 })).toEqual({ success: true, output: "second line" });
  });

  it("stops a line range at the cap on a line boundary, and says where to continue", async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${String(i + 1).padStart(3, "0")}`).join("\r\n");
    await writeFile(path.join(box.workspace, "crlf.txt"), `${lines}\r\n`);
    const result = await call(readFileTool({ maxBytes: 40 }), { path: "crlf.txt", startLine: 5 });
    expect(result.output).toBe("line 005\nline 006\nline 007\nline 008\n[output cap of 40 bytes reached; continue with startLine 9]");
    expect((await call(readFileTool(), { path: "crlf.txt", startLine: 100 })).output).toBe("line 100");
    expect((await call(readFileTool(), { path: "crlf.txt", startLine: 101 })).error).toBe("crlf.txt has only 100 lines; startLine 101 is past the end");
  });

  it("refuses to read /etc/passwd through a symlink", async () => {
    await symlink("/etc/passwd", path.join(box.workspace, "passwd"));
    const result = await call(readFileTool(), { path: "passwd" });
    expect(result.success).toBe(false);
    expect(result.output).not.toMatch(/root:/);
    expect(result.error).toMatch(/path escapes the workspace: passwd/);
  });

  it("refuses an absolute path outside the workspace", async () => {
    const result = await call(readFileTool(), { path: "/etc/hostname" });
    expect(result.error).toMatch(/^path escapes the workspace: \/etc\/hostname/);
  });

  it("refuses a binary file and a folder with a clear reason", async () => {
    await writeFile(path.join(box.workspace, "blob.bin"), Buffer.from([0x89, 0x50, 0x00, 0x01]));
    await mkdir(path.join(box.workspace, "docs"));
    expect((await call(readFileTool(), { path: "blob.bin" })).error).toMatch(/binary file/);
    expect((await call(readFileTool(), { path: "docs" })).error).toMatch(/docs is a folder/);
  });
});

describe("list_files", () => {
  it("lists names, types and sizes", async () => {
    await writeFile(path.join(box.workspace, "a.txt"), "12345");
    await mkdir(path.join(box.workspace, "sub"));
    const result = await call(listFilesTool(), {});
    expect(result.success).toBe(true);
    expect(result.output).toMatch(/^file\s+5\s+a\.txt$/m);
    expect(result.output).toMatch(/^dir\s+-\s+sub\/$/m);
  });

  it("stops at its entry limit and says how many were left out", async () => {
    for (let i = 0; i < 12; i++) await writeFile(path.join(box.workspace, `f${String(i).padStart(2, "0")}.txt`), "");
    const result = await call(listFilesTool({ maxEntries: 5 }), { path: "." });
    expect(result.output.split("\n").filter((l) => l.startsWith("file"))).toHaveLength(5);
    expect(result.output).toMatch(/… and 7 more/);
  });

  it("refuses to list a folder outside the workspace", async () => {
    const result = await call(listFilesTool(), { path: "../outside" });
    expect(result.error).toMatch(/path escapes the workspace/);
  });

  it("says clearly when the folder does not exist", async () => {
    expect((await call(listFilesTool(), { path: "nope" })).error).toMatch(/^not found: nope/);
  });
});
