import { describe, expect, it } from "vitest";
import { LoopDetector, type LoopCall, type LoopVerdict } from "../../src/engine/loop-detector.ts";
import { LoopConfigSchema } from "../../src/policy/schema.ts";

const detector = (config: unknown = {}) => new LoopDetector(LoopConfigSchema.parse(config));

/** Checks a call and, as the engine does, runs it (records its output) unless it is blocked or aborted. */
function attempt(loops: LoopDetector, call: LoopCall, output: string): LoopVerdict {
  const verdict = loops.check(call);
  if (verdict.level === "ok" || verdict.level === "warn") loops.record(call, output);
  return verdict;
}

const shell = (command: string): LoopCall => ({ name: "shell", argsCanonical: JSON.stringify({ command }) });
const readFile = (path: string): LoopCall => ({ name: "read_file", argsCanonical: JSON.stringify({ path }) });
const fetch = (url: string): LoopCall => ({ name: "http_fetch", argsCanonical: JSON.stringify({ url }) });

describe("identical calls", () => {
  it("warns on the third identical call, blocks the fourth and fifth, aborts on the sixth", () => {
    const loops = detector();
    const levels = Array.from({ length: 6 }, (_, i) => attempt(loops, shell("ls"), `run ${i}`).level);
    expect(levels).toEqual(["ok", "ok", "warn", "block", "block", "abort"]);
  });

  it("says which tool repeated and how often", () => {
    const loops = detector();
    for (let i = 0; i < 3; i++) attempt(loops, shell("ls"), "a.txt");
    expect(attempt(loops, shell("ls"), "a.txt")).toEqual({ level: "block", reason: "shell was called 4 times with the same arguments" });
  });

  it("counts repeats even with other calls in between", () => {
    const loops = detector();
    const levels = ["a", "b", "c"].flatMap((path) => [attempt(loops, shell("ls"), "x").level, attempt(loops, readFile(path), `content of ${path}`).level]);
    expect(levels).toEqual(["ok", "ok", "ok", "ok", "warn", "ok"]);
  });

  it("does not count calls with different arguments as the same call", () => {
    const loops = detector();
    const levels = ["a", "b", "c", "d", "e"].map((p) => attempt(loops, readFile(p), `content of ${p}`).level);
    expect(levels.every((l) => l === "ok")).toBe(true);
  });

  it("follows the configured thresholds", () => {
    const loops = detector({ warnAt: 2, blockAt: 3, abortAt: 3 });
    const levels = Array.from({ length: 3 }, () => attempt(loops, shell("ls"), "x").level);
    expect(levels).toEqual(["ok", "warn", "abort"]);
  });
});

describe("ping-pong", () => {
  it("escalates when two calls keep alternating with no new output", () => {
    const loops = detector();
    const calls = [readFile("a"), shell("make"), readFile("a"), shell("make"), readFile("a"), shell("make"), readFile("a")];
    const verdicts = calls.map((c) => attempt(loops, c, c.name === "shell" ? "error: missing semicolon" : "int main() {}"));
    expect(verdicts.map((v) => v.level)).toEqual(["ok", "ok", "ok", "warn", "block", "block", "abort"]);
    expect(verdicts[3].reason).toBe("read_file and shell switched back and forth 3 times without new output");
  });

  it("lets alternating calls continue while their output changes", () => {
    const loops = detector();
    const levels = [1, 2].flatMap((round) => [
      attempt(loops, readFile("a"), `version ${round}`).level,
      attempt(loops, shell("make"), `errors: ${3 - round}`).level,
    ]);
    expect(levels).toEqual(["ok", "ok", "ok", "ok"]);
  });
});

describe("same output for different arguments", () => {
  it("escalates when a tool keeps returning the same output whatever it is asked", () => {
    const loops = detector();
    const verdicts = ["u1", "u2", "u3", "u4", "u5", "u6"].map((u) => attempt(loops, fetch(u), "503 Service Unavailable"));
    expect(verdicts.map((v) => v.level)).toEqual(["ok", "ok", "warn", "block", "block", "abort"]);
    expect(verdicts[3].reason).toBe("http_fetch was called 4 times with different arguments and keeps returning the same output");
  });

  it("starts counting again when the output changes", () => {
    const loops = detector();
    attempt(loops, fetch("u1"), "503");
    attempt(loops, fetch("u2"), "503");
    attempt(loops, fetch("u3"), "200 OK");
    expect(attempt(loops, fetch("u4"), "200 OK").level).toBe("ok");
  });
});

describe("ignored tools", () => {
  it("never warns, blocks or aborts an ignored tool", () => {
    const loops = detector({ ignoredTools: ["current_time"] });
    const levels = Array.from({ length: 8 }, () => attempt(loops, { name: "current_time", argsCanonical: "{}" }, "12:00").level);
    expect(levels.every((l) => l === "ok")).toBe(true);
  });

  it("ignores every tool of an MCP server by pattern", () => {
    const loops = detector({ ignoredTools: ["mcp:github__*"] });
    const poll: LoopCall = { name: "github__get_run", owner: "mcp:github", argsCanonical: '{"id":1}' };
    const levels = Array.from({ length: 6 }, () => attempt(loops, poll, "in progress").level);
    expect(levels.every((l) => l === "ok")).toBe(true);
  });

  it("still watches the tools that are not ignored", () => {
    const loops = detector({ ignoredTools: ["current_time"] });
    const levels = Array.from({ length: 3 }, () => attempt(loops, shell("ls"), "x").level);
    expect(levels[2]).toBe("warn");
  });
});
