/**
 * The file tools under attack: a folder swapped for a link to the outside while they work, hard links
 * to outside files, FIFOs, and a read cut short by /stop. Each test is the attack, bounded in time.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { link, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFileTool } from "../../src/tools/builtin/read-file.ts";
import { writeFileTool } from "../../src/tools/builtin/write-file.ts";
import { contextFor, makeSandbox } from "./context.ts";

let box: Awaited<ReturnType<typeof makeSandbox>>;
beforeEach(async () => {
  box = await makeSandbox();
});
afterEach(async () => {
  await box.cleanup();
});

/**
 * Starts another process that swaps `workspace/d` between a real folder and a link to the outside
 * folder as fast as it can, for at most `ms`. Returns a function that stops it.
 */
function swapLoop(ms: number): () => Promise<void> {
  const script = `
    const fs = require("node:fs");
    const end = Date.now() + ${ms};
    process.chdir(${JSON.stringify(box.workspace)});
    while (Date.now() < end) {
      try { fs.renameSync("d", "d.real"); fs.symlinkSync(${JSON.stringify(box.outside)}, "d"); } catch {}
      try { fs.unlinkSync("d"); fs.renameSync("d.real", "d"); } catch {}
    }`;
  const child = spawn(process.execPath, ["-e", script], { stdio: "ignore" });
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
}

describe("file tools cannot be raced out of the workspace", () => {
  it("never reads the outside file while a folder on the path is swapped for a link, over thousands of reads", async () => {
    await mkdir(path.join(box.workspace, "d"));
    await writeFile(path.join(box.workspace, "d", "f.txt"), "inside");
    await writeFile(path.join(box.outside, "f.txt"), "OUTSIDE-SECRET");
    const stop = swapLoop(15_000);
    const tool = readFileTool();
    const ctx = contextFor(box.workspace);
    const until = Date.now() + 6_000;
    let reads = 0;
    let inside = 0;
    try {
      for (; reads < 3000 && Date.now() < until; reads++) {
        const result = await tool.execute({ path: "d/f.txt" }, ctx);
        expect(result.output).not.toContain("OUTSIDE-SECRET");
        if (result.success) inside++;
      }
    } finally {
      await stop();
    }
    expect(reads).toBeGreaterThan(200);
    expect(inside).toBeGreaterThan(0);
  }, 20_000);

  it("never lands a write outside while a folder on the path is swapped for a link", async () => {
    await mkdir(path.join(box.workspace, "d"));
    const stop = swapLoop(15_000);
    const tool = writeFileTool();
    const ctx = contextFor(box.workspace);
    const until = Date.now() + 5_000;
    let writes = 0;
    try {
      for (; writes < 2000 && Date.now() < until; writes++) {
        await tool.execute({ path: `d/w${writes % 10}.txt`, content: "planted", append: false }, ctx);
      }
    } finally {
      await stop();
    }
    expect(writes).toBeGreaterThan(200);
    for (let i = 0; i < 10; i++) expect(existsSync(path.join(box.outside, `w${i}.txt`))).toBe(false);
  }, 20_000);

  it("refuses to read or overwrite a hard link to an outside file", async () => {
    const secret = path.join(box.outside, "secret.txt");
    await writeFile(secret, "OUTSIDE-SECRET");
    await link(secret, path.join(box.workspace, "innocent.txt"));
    const read = await readFileTool().execute({ path: "innocent.txt" }, contextFor(box.workspace));
    expect(read.success).toBe(false);
    expect(read.output).not.toContain("OUTSIDE-SECRET");
    expect(read.error).toMatch(/innocent\.txt has 2 hard links/);
    const write = await writeFileTool().execute({ path: "innocent.txt", content: "pwned", append: false }, contextFor(box.workspace));
    expect(write.error).toMatch(/hard links/);
    const append = await writeFileTool().execute({ path: "innocent.txt", content: "pwned", append: true }, contextFor(box.workspace));
    expect(append.error).toMatch(/hard links/);
    expect(await readFile(secret, "utf8")).toBe("OUTSIDE-SECRET");
  });

  it("refuses a FIFO at once, for reading and writing, even four at a time", async () => {
    const fifo = path.join(box.workspace, "pipe");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const started = Date.now();
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => readFileTool().execute({ path: "pipe" }, contextFor(box.workspace))),
      writeFileTool().execute({ path: "pipe", content: "x", append: false }, contextFor(box.workspace)),
    ]);
    expect(Date.now() - started).toBeLessThan(2_000);
    for (const result of results) expect(result.error).toMatch(/pipe is not a regular file/);
  });

  it("ends a slow read when the turn is stopped", async () => {
    const line = `${"x".repeat(99)}\n`;
    await writeFile(path.join(box.workspace, "big.txt"), line.repeat(400_000));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const started = Date.now();
    const result = await readFileTool().execute({ path: "big.txt", startLine: 10_000_000 }, contextFor(box.workspace, controller.signal));
    expect(result).toMatchObject({ success: false, error: "cancelled while reading big.txt" });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
