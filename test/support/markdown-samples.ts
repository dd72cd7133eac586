/**
 * Markdown a model writes, one sample per case the chat converters must get right: links whose URL
 * holds parentheses, ~~~ fences, nested emphasis, tables, quotes, nested lists, code spans holding
 * markers, entities, headings, images and raw HTML. The Telegram, Slack and Discord tests each map
 * every sample to what their platform must receive, and send them all through the real SDK.
 */
export const MARKDOWN_SAMPLES = {
  linkWithParentheses: "See [Foo](https://en.wikipedia.org/wiki/Foo_(bar)) now",
  bareUrlWithParentheses: "Read https://en.wikipedia.org/wiki/Foo_(bar) first",
  tildeFence: "Run:\n~~~py\nif a < b and c & d: pass\n~~~\ndone",
  fenceHoldingBackticks: "~~~md\nuse ```ts fences\n~~~",
  unclosedFence: "```\nopen <x>",
  emphasis: "**bold**, *italic*, _also italic_, ~~gone~~",
  nestedEmphasis: "***both*** and **_both_**",
  table: "| Fruit | Qty |\n|:--|--:|\n| apple | 3 |\n| [kiwi](https://k.io) | 12 |\n| 漢字 | 7 |",
  blockquote: "> quoted **line**\n> second line\n>\n> > nested",
  nestedLists: "- one\n  - two\n    - three\n- four\n\n3. third\n4. fourth\n\n- [ ] todo\n- [x] done",
  codeSpans: "Use `a*b_c`, `**not bold**` and `<tag> & co`",
  entities: "AT&amp;T &copy; 2024 &#x1F600; &bogus; and a & b < c",
  headings: "# Title\n## Plan **now**\nstep one\n#### Details",
  image: "![chart](https://x.test/c.png)",
  rawHtml: "<b>hi</b> <script>alert(1)</script>\n\n<div>\n**x**\n</div>",
  wordsWithMarkers: "my_var_name is 2*3*4",
  unsafeLinks: "[run](javascript:alert(1)) and [file](./src/a.ts)",
  mentions: "<!channel> <@U123> @everyone",
  rule: "above\n\n---\n\nbelow",
} as const;

/** The name of one sample. */
export type MarkdownSample = keyof typeof MARKDOWN_SAMPLES;
