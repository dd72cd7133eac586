/**
 * The bot's log outputs get one write for the lines of a few milliseconds (src/observe/log-batch.ts),
 * and no line is lost when the process exits right after logging it.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { batchedLog } from "../../src/observe/log-batch.ts";

const REPO = path.resolve(import.meta.dirname, "../..");

describe("batched log outputs", () => {
  it("writes the lines of a few milliseconds together, in order, to every output", async () => {
    const a: string[] = [];
    const b: string[] = [];
    const log = batchedLog([{ write: (chunk: string) => void a.push(chunk) }, { write: (chunk: string) => void b.push(chunk) }]);
    log.write("one\n");
    // A line written on a later turn of the event loop joins the same write.
    await new Promise((r) => setImmediate(r));
    log.write("two\n");
    expect(a).toEqual([]);
    await new Promise((r) => setTimeout(r, 60));
    expect(a).toEqual(["one\ntwo\n"]);
    expect(b).toEqual(["one\ntwo\n"]);
    log.write("three\n");
    log.flush();
    expect(a).toEqual(["one\ntwo\n", "three\n"]);
  });

  it("does not hold more than a few hundred lines", () => {
    const out: string[] = [];
    const log = batchedLog([{ write: (chunk: string) => void out.push(chunk) }]);
    for (let i = 0; i < 1000; i++) log.write(`${i}\n`);
    expect(out.length).toBeGreaterThanOrEqual(3);
    expect(out.join("").split("\n").slice(0, 3)).toEqual(["0", "1", "2"]);
  });

  it("writes what is pending when the process exits", () => {
    const script = `
      import { batchedLog } from ${JSON.stringify(path.join(REPO, "src/observe/log-batch.ts"))};
      const log = batchedLog([process.stdout]);
      log.write("the last line\\n");
      process.exit(3);
    `;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(run.status).toBe(3);
    expect(run.stdout).toBe("the last line\n");
  });
});
