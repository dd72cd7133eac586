import { describe, expect, it } from "vitest";
import { toDiscordMarkdown } from "../../adapters/discord/markdown.ts";
import { MARKDOWN_SAMPLES, type MarkdownSample } from "../support/markdown-samples.ts";

const ZWSP = "\u200B";

/** What Discord must receive for each sample, as a message's `content`. */
const DISCORD_MARKDOWN: Record<MarkdownSample, string> = {
  linkWithParentheses: "See [Foo](https://en.wikipedia.org/wiki/Foo_(bar)) now",
  bareUrlWithParentheses: "Read <https://en.wikipedia.org/wiki/Foo_(bar)> first",
  tildeFence: "Run:\n```py\nif a < b and c & d: pass\n```\ndone",
  fenceHoldingBackticks: `\`\`\`md\nuse \`${ZWSP}\`${ZWSP}\`ts fences\n\`\`\``,
  unclosedFence: "```\nopen <x>\n```",
  emphasis: "**bold**, *italic*, _also italic_, ~~gone~~",
  nestedEmphasis: "***both*** and **_both_**",
  table: [
    "```",
    "Fruit               | Qty",
    "--------------------+----",
    "apple               |   3",
    "kiwi (https://k.io) |  12",
    "漢字                |   7",
    "```",
  ].join("\n"),
  blockquote: "> quoted **line**\n> second line\n> \n> nested",
  nestedLists: "- one\n  - two\n    - three\n- four\n\n3. third\n4. fourth\n\n- ☐ todo\n- ☑ done",
  codeSpans: "Use `a*b_c`, `**not bold**` and `<tag> & co`",
  entities: "AT&T © 2024 😀 &bogus; and a & b < c",
  headings: "# Title\n## Plan **now**\nstep one\n**Details**",
  image: "[chart](https://x.test/c.png)",
  rawHtml: "<b>hi</b> <script>alert(1)</script>\n\n<div>\n**x**\n</div>",
  wordsWithMarkers: "my_var_name is 2*3*4",
  unsafeLinks: "run (javascript:alert(1)) and file (./src/a.ts)",
  mentions: "<!channel> <@U123> @everyone",
  rule: "above\n\n───\n\nbelow",
};

describe("markdown for Discord", () => {
  it.each(Object.entries(DISCORD_MARKDOWN))("renders the %s sample as Discord markdown", (name, expected) => {
    expect(toDiscordMarkdown(MARKDOWN_SAMPLES[name as MarkdownSample])).toBe(expected);
  });

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

  it("keeps a link whole when its parentheses do not pair up, by encoding them", () => {
    expect(toDiscordMarkdown("[odd](<https://x.io/a)b>)")).toBe("[odd](https://x.io/a%29b)");
  });

  it("keeps backslash escapes, so an escaped star stays a star", () => {
    expect(toDiscordMarkdown("2 \\* 3 and \\*not italic\\*")).toBe("2 \\* 3 and \\*not italic\\*");
  });

  it("turns <br> into a line break", () => {
    expect(toDiscordMarkdown("one<br>two")).toBe("one\ntwo");
  });
});
