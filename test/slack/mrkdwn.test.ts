import { describe, expect, it } from "vitest";
import { escapeSlackText, markdownToMrkdwn } from "../../adapters/slack/mrkdwn.ts";

describe("markdown to Slack mrkdwn", () => {
  it("turns **bold** and __bold__ into *bold*", () => {
    expect(markdownToMrkdwn("a **b** c __d__")).toBe("a *b* c *d*");
  });
  it("turns *italic* into _italic_ and ~~strike~~ into ~strike~", () => {
    expect(markdownToMrkdwn("an *aside* and ~~old~~")).toBe("an _aside_ and ~old~");
  });
  it("turns [text](url) into <url|text>", () => {
    expect(markdownToMrkdwn("see [docs](https://x.io/p)")).toBe("see <https://x.io/p|docs>");
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
  it("closes a code fence the model left open", () => {
    expect(markdownToMrkdwn("```\nx")).toBe("```\nx\n```");
  });
  it("does not treat snake_case or arithmetic as emphasis", () => {
    expect(markdownToMrkdwn("my_var_name is 2*3*4")).toBe("my_var_name is 2*3*4");
  });
});
