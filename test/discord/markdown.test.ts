import { describe, expect, it } from "vitest";
import { toDiscordMarkdown } from "../../adapters/discord/markdown.ts";

describe("markdown for Discord", () => {
  it("passes ordinary Discord markdown through unchanged", () => {
    const text = "**bold** *italic* ~~gone~~ `code` [docs](https://example.com)\n> quote\n- item\n# Title";
    expect(toDiscordMarkdown(text)).toBe(text);
  });

  it("turns __bold__ into **bold**, since Discord would underline it", () => {
    expect(toDiscordMarkdown("this is __important__ and snake_case_name stays")).toBe("this is **important** and snake_case_name stays");
  });

  it("leaves code fences and inline code exactly as written", () => {
    const text = "```python\n#### not a heading\nx = __init__\n| a | b |\n|---|---|\n```\nand `__dunder__`";
    expect(toDiscordMarkdown(text)).toBe(text);
  });

  it("shows headings deeper than ### as bold lines", () => {
    expect(toDiscordMarkdown("#### Details\ntext")).toBe("**Details**\ntext");
  });

  it("puts tables in a code block so the columns stay aligned", () => {
    expect(toDiscordMarkdown("before\n| a | b |\n|---|---|\n| 1 | 2 |\nafter")).toBe("before\n```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\nafter");
  });

  it("turns images into links and rules into a line Discord can show", () => {
    expect(toDiscordMarkdown("![chart](https://x.test/c.png)\n---")).toBe("[chart](https://x.test/c.png)\n───");
  });
});
