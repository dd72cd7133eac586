import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { logFilesOldestFirst, openRotatingLog } from "../../src/observe/log-files.ts";

let dataDir: string;
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe("log file rotation", () => {
  it("rotates past the size limit, keeps three old files, and lists them oldest first", () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-logs-"));
    const log = openRotatingLog(dataDir, { maxBytes: 100, keep: 3 });
    for (let i = 0; i < 20; i++) log.write(`${JSON.stringify({ n: i, pad: "x".repeat(30) })}\n`);
    const files = logFilesOldestFirst(dataDir);
    expect(files.map((f) => path.basename(f))).toEqual(["gatehouse.log.3", "gatehouse.log.2", "gatehouse.log.1", "gatehouse.log"]);
    const numbers = files.flatMap((f) => readFileSync(f, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { n: number }).n));
    // Oldest files were dropped, but what is kept is in order and ends with the last line written.
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(numbers.at(-1)).toBe(19);
    expect(numbers.length).toBeLessThan(20);
    for (const f of files) expect(readFileSync(f).length).toBeLessThanOrEqual(100);
  });

  it("appends to the existing log file after a restart", () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-logs-"));
    openRotatingLog(dataDir).write('{"a":1}\n');
    openRotatingLog(dataDir).write('{"a":2}\n');
    const [live] = logFilesOldestFirst(dataDir);
    expect(readFileSync(live!, "utf8")).toBe('{"a":1}\n{"a":2}\n');
  });
});
