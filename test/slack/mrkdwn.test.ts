import { describe, expect, it } from "vitest";
import { escapeSlackText, markdownToMrkdwn } from "../../adapters/slack/mrkdwn.ts";
import { checkMrkdwn } from "../emulators/slack/mrkdwn-check.ts";
import { MARKDOWN_SAMPLES, type MarkdownSample } from "../support/markdown-samples.ts";

const ZWSP = "\u200B";

/** What Slack must receive for each sample, as a message's mrkdwn `text`. */
const SLACK_MRKDWN: Record<MarkdownSample, string> = {
  linkWithParentheses: "See <https://en.wikipedia.org/wiki/Foo_(bar)|Foo> now",
  bareUrlWithParentheses: "Read <https://en.wikipedia.org/wiki/Foo_(bar)> first",
  tildeFence: "Run:\n```\nif a &lt; b and c &amp; d: pass\n```\ndone",
  fenceHoldingBackticks: `\`\`\`\nuse \`${ZWSP}\`${ZWSP}\`ts fences\n\`\`\``,
  unclosedFence: "```\nopen &lt;x&gt;\n```",
  emphasis: "*bold*, _italic_, _also italic_, ~gone~",
  nestedEmphasis: "*_both_* and *_both_*",
  table: [
    "```",
    "Fruit               | Qty",
    "--------------------+----",
    "apple               |   3",
    "kiwi (https://k.io) |  12",
    "漢字                |   7",
    "```",
  ].join("\n"),
  blockquote: "> quoted *line*\n> second line\n>\n> nested",
  nestedLists: "• one\n  • two\n    • three\n• four\n\n3. third\n4. fourth\n\n• ☐ todo\n• ☑ done",
  codeSpans: "Use `a*b_c`, `**not bold**` and `&lt;tag&gt; &amp; co`",
  entities: "AT&amp;T © 2024 😀 &amp;bogus; and a &amp; b &lt; c",
  headings: "*Title*\n*Plan now*\nstep one\n*Details*",
  image: "<https://x.test/c.png|chart>",
  rawHtml: "&lt;b&gt;hi&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;\n\n&lt;div&gt;\n**x**\n&lt;/div&gt;",
  wordsWithMarkers: "my_var_name is 2*3*4",
  unsafeLinks: "run (javascript:alert(1)) and file (./src/a.ts)",
  mentions: "&lt;!channel&gt; &lt;@U123&gt; @everyone",
  rule: "above\n\n―――\n\nbelow",
};

describe("markdown to Slack mrkdwn", () => {
  it.each(Object.entries(SLACK_MRKDWN))("renders the %s sample as mrkdwn Slack reads as meant", (name, expected) => {
    const out = markdownToMrkdwn(MARKDOWN_SAMPLES[name as MarkdownSample]);
    expect(out).toBe(expected);
    expect(checkMrkdwn(out)).toMatchObject({ ok: true });
  });

  it("turns **bold** and __bold__ into *bold*", () => {
    expect(markdownToMrkdwn("a **b** c __d__")).toBe("a *b* c *d*");
  });
  it("turns [text](url) into <url|text>, escaping the label and encoding what would split the link", () => {
    expect(markdownToMrkdwn("see [docs](https://x.io/p)")).toBe("see <https://x.io/p|docs>");
    expect(markdownToMrkdwn("[a <b> & c](https://x.io/?q=1&r=a|b)")).toBe("<https://x.io/?q=1&amp;r=a%7Cb|a &lt;b&gt; &amp; c>");
  });
  it("turns headings into bold lines and bullets into •", () => {
    expect(markdownToMrkdwn("## Plan\n- one\n  * two\n1. three")).toBe("*Plan*\n• one\n  • two\n1. three");
  });
  it("keeps code blocks verbatim apart from Slack's escapes, dropping the language tag", () => {
    expect(markdownToMrkdwn("```ts\nconst a = **b** < c;\n```")).toBe("```\nconst a = **b** &lt; c;\n```");
  });
  it("leaves markup inside inline code alone", () => {
    expect(markdownToMrkdwn("run `a **b** [c](d)`")).toBe("run `a **b** [c](d)`");
  });
  it("escapes &, < and > in ordinary text so Slack does not read them as markup", () => {
    expect(markdownToMrkdwn("<!channel> a & b > c")).toBe("&lt;!channel&gt; a &amp; b &gt; c");
    expect(escapeSlackText("<@U1>")).toBe("&lt;@U1&gt;");
  });
  it("quotes every line of a quote that holds a list", () => {
    expect(markdownToMrkdwn("> steps:\n> - one\n> - two")).toBe("> steps:\n> • one\n> • two");
  });
  it("does not treat snake_case or arithmetic as emphasis", () => {
    expect(markdownToMrkdwn("my_var_name is 2*3*4 and a**b**c")).toBe("my_var_name is 2*3*4 and a**b**c");
  });
});
