import { describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../adapters/telegram/html.ts";
import { checkHtml } from "../emulators/telegram/markup-check.ts";

const html = markdownToTelegramHtml;

describe("markdown to Telegram HTML", () => {
  it("escapes &, < and > in plain text", () => {
    expect(html("a < b && c > d")).toBe("a &lt; b &amp;&amp; c &gt; d");
  });

  it("maps bold, italic, strike and inline code", () => {
    expect(html("**bold** and *it* and _also it_ and ~~gone~~ and `x < y`")).toBe(
      "<b>bold</b> and <i>it</i> and <i>also it</i> and <s>gone</s> and <code>x &lt; y</code>",
    );
  });

  it("turns fenced blocks into pre/code with the language and escapes their content", () => {
    expect(html("see:\n```ts\nif (a < b && c) {}\n```\ndone")).toBe(
      'see:\n<pre><code class="language-ts">if (a &lt; b &amp;&amp; c) {}</code></pre>\ndone',
    );
  });

  it("keeps markdown inside code untouched", () => {
    expect(html("`**not bold**`")).toBe("<code>**not bold**</code>");
  });

  it("makes links with an escaped href", () => {
    expect(html('[the docs](https://example.com/a?b=1&c="2")')).toBe('<a href="https://example.com/a?b=1&amp;c=&quot;2&quot;">the docs</a>');
  });

  it("makes headings bold", () => {
    expect(html("## Plan\nstep")).toBe("<b>Plan</b>\nstep");
  });

  it("leaves snake_case words, lone stars and bullets alone", () => {
    expect(html("use my_var_name * 2\n* item one\n2 * 3 * 4")).toBe("use my_var_name * 2\n* item one\n2 * 3 * 4");
  });

  it("produces markup Telegram accepts for an answer full of markup characters", () => {
    const nasty = "x<y & z>w _a_b_ *c **d* e** `f` <b> &amp; [l](javascript:x) __init__ ** * _ < > & 5 > 3 < 4\n```\n<tag> & ``` \n";
    const result = checkHtml(html(nasty));
    expect(result).toMatchObject({ ok: true });
  });
});
