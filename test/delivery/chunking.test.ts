import { describe, expect, it } from "vitest";
import { splitMessage } from "../../src/delivery/chunking.ts";

const FENCE_LINE = /^\s*(```+|~~~+)/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What must survive a split: every character except whitespace and fence marker lines. */
const essence = (text: string) =>
  text.split("\n").filter((l) => !FENCE_LINE.test(l)).join("").replace(/\s+/g, "");

const fenceCount = (text: string) => text.split("\n").filter((l) => FENCE_LINE.test(l)).length;

function prose(words: number, seed = 0): string {
  const vocab = ["delivery", "queue", "thread", "approval", "gateway", "session", "model", "tool", "reply", "limit"];
  return Array.from({ length: words }, (_, i) => vocab[(i * 7 + seed) % vocab.length]).join(" ");
}

function codeBlock(lines: number, info = "ts"): string {
  return ["```" + info, ...Array.from({ length: lines }, (_, i) => `const line${i} = await step(${i}); // keep ${i}`), "```"].join("\n");
}

/** A realistic long answer: prose, a long code block, more prose, another block, emoji throughout. */
function answer(limit: number): string {
  return [
    prose(limit / 20, 1),
    "Here is the change 🚀🚀:",
    codeBlock(Math.ceil(limit / 25)),
    prose(limit / 12, 2) + " 👍🏽".repeat(30),
    codeBlock(10, "python"),
    prose(limit / 15, 3),
  ].join("\n\n");
}

function expectWellFormed(parts: string[], original: string, limit: number): void {
  expect(parts.length).toBeGreaterThan(1);
  for (const part of parts) {
    expect(part.length).toBeLessThanOrEqual(limit);
    expect(fenceCount(part) % 2, `unbalanced fences in:\n${part.slice(0, 200)}`).toBe(0);
    expect(LONE_SURROGATE.test(part)).toBe(false);
  }
  expect(essence(parts.join("\n"))).toBe(essence(original));
}

describe("splitMessage", () => {
  it("leaves text within the limit as one part", () => {
    expect(splitMessage("short answer", 2000)).toEqual(["short answer"]);
  });

  for (const limit of [2000, 4096]) {
    it(`splits a long answer with code at ${limit} characters: parts fit, fences balanced, nothing lost`, () => {
      const text = answer(limit);
      expect(text.length).toBeGreaterThan(limit * 2);
      expectWellFormed(splitMessage(text, limit), text, limit);
    });

    it(`reopens a code block cut at ${limit} characters with its language in the next part`, () => {
      const text = codeBlock(Math.ceil((limit * 2.5) / 40), "python");
      const parts = splitMessage(text, limit);
      expectWellFormed(parts, text, limit);
      for (const part of parts) expect(part.startsWith("```python\n")).toBe(true);
    });

    it(`never cuts an emoji in half at ${limit} characters, even without spaces to break at`, () => {
      const text = "😀".repeat(limit) + "x" + "🎉".repeat(limit);
      const parts = splitMessage(text, limit);
      expectWellFormed(parts, text, limit);
      expect(parts.join("")).toBe(text);
    });
  }

  it("keeps lines of a code block whole when the block is split", () => {
    const text = codeBlock(200);
    const parts = splitMessage(text, 2000);
    const lines = text.split("\n").filter((l) => l.startsWith("const line"));
    for (const line of lines) expect(parts.some((p) => p.split("\n").includes(line))).toBe(true);
  });
});

describe("splitting a Markdown table", () => {
  const header = "| host | state | uptime |\n|------|:-----:|-------:|";
  const rows = Array.from({ length: 120 }, (_, i) => `| web-${String(i).padStart(3, "0")} | ok | ${i} d |`);
  const text = `Here is the fleet:\n\n${header}\n${rows.join("\n")}\n\nAll hosts are up.`;

  it("starts every part that goes on with the table's rows with its header again, losing and doubling no row", () => {
    const parts = splitMessage(text, 1000);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(1000);
    const withRows = parts.filter((p) => p.includes("| web-"));
    for (const part of withRows) {
      const lines = part.split("\n");
      const first = lines.findIndex((l) => l.startsWith("| web-"));
      expect(lines.slice(first - 2, first).join("\n")).toBe(header);
    }
    const seen = parts.flatMap((p) => p.split("\n").filter((l) => l.startsWith("| web-")));
    expect(seen).toEqual(rows);
    expect(parts.at(-1)).toMatch(/All hosts are up\.$/);
    expect(parts.join("\n").split(header).length - 1).toBe(withRows.length);
  });

  it("does not take pipes in a code block for a table", () => {
    const code = ["```", "a | b", "--- | ---", ...Array.from({ length: 80 }, (_, i) => `x${i} | y${i}`), "```"].join("\n");
    const parts = splitMessage(code, 500);
    expect(parts.slice(1).every((p) => p.startsWith("```\n") && !p.startsWith("```\na | b"))).toBe(true);
  });
});
