import { describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../adapters/telegram/html.ts";
import { checkHtml } from "../emulators/telegram/markup-check.ts";
import { MARKDOWN_SAMPLES, type MarkdownSample } from "../support/markdown-samples.ts";

const html = markdownToTelegramHtml;

/** What Telegram must receive for each sample (parse_mode HTML). */
const TELEGRAM_HTML: Record<MarkdownSample, string> = {
  linkWithParentheses: 'See <a href="https://en.wikipedia.org/wiki/Foo_(bar)">Foo</a> now',
  bareUrlWithParentheses: 'Read <a href="https://en.wikipedia.org/wiki/Foo_(bar)">https://en.wikipedia.org/wiki/Foo_(bar)</a> first',
  tildeFence: 'Run:\n<pre><code class="language-py">if a &lt; b and c &amp; d: pass</code></pre>\ndone',
  fenceHoldingBackticks: '<pre><code class="language-md">use ```ts fences</code></pre>',
  unclosedFence: "<pre><code>open &lt;x&gt;</code></pre>",
  emphasis: "<b>bold</b>, <i>italic</i>, <i>also italic</i>, <s>gone</s>",
  nestedEmphasis: "<i><b>both</b></i> and <b><i>both</i></b>",
  table: [
    "<pre>Fruit               | Qty",
    "--------------------+----",
    "apple               |   3",
    "kiwi (https://k.io) |  12",
    "漢字                |   7</pre>",
  ].join("\n"),
  blockquote: "<blockquote>quoted <b>line</b>\nsecond line\n\nnested</blockquote>",
  nestedLists: "• one\n  • two\n    • three\n• four\n\n3. third\n4. fourth\n\n• ☐ todo\n• ☑ done",
  codeSpans: "Use <code>a*b_c</code>, <code>**not bold**</code> and <code>&lt;tag&gt; &amp; co</code>",
  entities: "AT&amp;T © 2024 😀 &amp;bogus; and a &amp; b &lt; c",
  headings: "<b>Title</b>\n<b>Plan now</b>\nstep one\n<b>Details</b>",
  image: '<a href="https://x.test/c.png">chart</a>',
  rawHtml: "&lt;b&gt;hi&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;\n\n&lt;div&gt;\n**x**\n&lt;/div&gt;",
  wordsWithMarkers: "my_var_name is 2*3*4",
  unsafeLinks: "run (javascript:alert(1)) and file (./src/a.ts)",
  mentions: "&lt;!channel&gt; &lt;@U123&gt; @everyone",
  rule: "above\n\n───\n\nbelow",
};

describe("markdown to Telegram HTML", () => {
  it.each(Object.entries(TELEGRAM_HTML))("renders the %s sample with tags Telegram accepts", (name, expected) => {
    const out = html(MARKDOWN_SAMPLES[name as MarkdownSample]);
    expect(out).toBe(expected);
    expect(checkHtml(out)).toMatchObject({ ok: true });
  });

  it("escapes &, < and > in plain text", () => {
    expect(html("a < b && c > d")).toBe("a &lt; b &amp;&amp; c &gt; d");
  });

  it("turns ``` fences into pre/code with the language and escapes their content", () => {
    expect(html("see:\n```ts\nif (a < b && c) {}\n```\ndone")).toBe(
      'see:\n<pre><code class="language-ts">if (a &lt; b &amp;&amp; c) {}</code></pre>\ndone',
    );
  });

  it("drops a language tag that could break out of the class attribute", () => {
    expect(html('```ts"><b\nx\n```')).toBe("<pre><code>x</code></pre>");
  });

  it("makes links with an escaped href", () => {
    expect(html('[the docs](https://example.com/a?b=1&c="2")')).toBe('<a href="https://example.com/a?b=1&amp;c=&quot;2&quot;">the docs</a>');
  });

  it("keeps inline code inside a link as text, since Telegram refuses code inside a link", () => {
    expect(html("[run `npm i`](https://npmjs.com)")).toBe('<a href="https://npmjs.com">run npm i</a>');
  });

  it("keeps a list item's code block unindented and whole", () => {
    expect(html("- install:\n\n  ```sh\n  npm i\n  ```\n- done")).toBe('• install:\n\n<pre><code class="language-sh">npm i</code></pre>\n• done');
  });

  it("leaves snake_case words and lone stars alone, and shows a list item as a bullet line", () => {
    expect(html("use my_var_name * 2\n* item one\n2 * 3 * 4")).toBe("use my_var_name * 2\n• item one\n  2 * 3 * 4");
  });

  it("keeps emphasis between characters of scripts written without spaces", () => {
    expect(html("这是**重要**的")).toBe("这是<b>重要</b>的");
  });

  it("sends text that renders to nothing (only a link definition) as escaped text instead of an empty message", () => {
    expect(html("[docs]: https://x.io/<a>")).toBe("[docs]: https://x.io/&lt;a&gt;");
  });

  it("produces markup Telegram accepts for an answer full of markup characters", () => {
    const nasty = "x<y & z>w _a_b_ *c **d* e** `f` <b> &amp; [l](javascript:x) __init__ ** * _ < > & 5 > 3 < 4\n```\n<tag> & ``` \n";
    const result = checkHtml(html(nasty));
    expect(result).toMatchObject({ ok: true });
  });
});
