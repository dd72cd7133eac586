/**
 * The model's Markdown, parsed once with `marked`'s GFM lexer and walked block by block for a
 * platform's format. The walk owns what every chat platform shares: blank lines kept between
 * blocks as the model wrote them, lists as "• " / "1. " lines with nested items indented, task
 * boxes, tables laid out as aligned monospace text, link definitions dropped. A `BlockStyle`
 * (one per adapter) renders the inline spans and says how a heading, code block, quote, table
 * and raw HTML look on its platform.
 */
import { marked, type MarkedToken, type Token, type Tokens } from "marked";
import { layOutTable } from "./markdown-table.ts";

export type { MarkedToken, Token, Tokens };

/** How one platform renders what the block walk hands it. */
export interface BlockStyle {
  /** The inline tokens of a paragraph or a list item's line. */
  inline(tokens: Token[]): string;
  /** Plain text, escaped for the platform. */
  text(text: string): string;
  heading(tokens: Token[], depth: number): string;
  /** A fenced or indented code block; `lang` is the first word of the info string, or "". */
  code(code: string, lang: string): string;
  /** A quote around its rendered content; `nested` when it sits inside another quote. */
  quote(content: string, nested: boolean): string;
  /** A table, already laid out as aligned monospace lines. */
  table(laidOut: string): string;
  /** Raw HTML from the model, which is shown as text, never passed on as markup. */
  html(raw: string): string;
  /** A thematic break (`---`). */
  rule: string;
  /** The marker of an unordered list item, with its trailing space. */
  bullet: string;
}

/** Parses Markdown into block tokens with GitHub's extensions (tables, strikethrough, autolinks, task lists). */
export function lexMarkdown(markdown: string): Token[] {
  return marked.lexer(markdown, { gfm: true });
}

/**
 * Renders Markdown for a platform. Text the parser cannot handle, or that renders to nothing (only
 * link definitions, say), is sent as escaped plain text, so a message is never lost or empty.
 */
export function renderMarkdown(markdown: string, style: BlockStyle): string {
  // Most short answers are one sentence of plain text: rendered as the lexer would render them.
  return isPlainSentence(markdown) ? style.text(markdown) : renderLexed(markdown, style);
}

/** renderMarkdown through the lexer, for any text. */
export function renderLexed(markdown: string, style: BlockStyle): string {
  try {
    const rendered = joinBlocks(renderSequence(lexMarkdown(markdown), style, false));
    return rendered.trim() || !markdown.trim() ? rendered : style.text(markdown);
  } catch {
    return style.text(markdown);
  }
}

/**
 * Text the lexer reads as one paragraph of plain text, on one line or several: no character with a
 * meaning in Markdown (emphasis, code, links, escapes, entities, raw HTML, tables) — an underscore
 * only inside a word (`current_time`), where it is never emphasis — no line that starts a block
 * (heading, quote, list item, rule, indented code), no blank line, no autolink, and no whitespace at
 * either end of a line (two trailing spaces would be a hard break).
 */
export function isPlainSentence(text: string): boolean {
  return (
    text.length > 0 &&
    text.length <= 2000 &&
    !/[\\`*~[\]<>&|!@\r\t\0]|:\/\/|www\.|\n\n/i.test(text) &&
    !/(^|[^A-Za-z0-9_])_|_($|[^A-Za-z0-9_])/.test(text) &&
    !/(^|\n)(\s|[#>+\-=]|\d{1,9}[.)])/.test(text) &&
    !/\s(\n|$)/.test(text)
  );
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0", copy: "©", reg: "®", trade: "™",
  hellip: "…", mdash: "—", ndash: "–", lsquo: "‘", rsquo: "’", ldquo: "“", rdquo: "”", laquo: "«",
  raquo: "»", bull: "•", middot: "·", deg: "°", times: "×", divide: "÷", plusmn: "±", euro: "€",
  pound: "£", yen: "¥", cent: "¢", sect: "§", para: "¶", larr: "←", rarr: "→", uarr: "↑", darr: "↓",
  harr: "↔", le: "≤", ge: "≥", ne: "≠", check: "✓",
};

/**
 * Resolves character references (`&amp;`, `&#169;`, `&#x1F600;`) the way a Markdown viewer shows
 * them; an unknown name stays as written.
 */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31});/g, (whole, body: string) => {
    if (body[0] !== "#") return NAMED_ENTITIES[body] ?? whole;
    const codePoint = /^#[xX]/.test(body) ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
    const valid = codePoint > 0 && codePoint <= 0x10ffff && (codePoint < 0xd800 || codePoint > 0xdfff);
    return valid ? String.fromCodePoint(codePoint) : "\ufffd";
  });
}

/** The text of an inline `text` or `escape` token as a reader sees it, character references resolved. */
export function visibleText(token: Tokens.Text | Tokens.Escape): string {
  return token.type === "escape" ? token.text : decodeEntities(token.text);
}

/**
 * True when the emphasis at `tokens[i]` touches a Latin letter or digit (`2*3*4`, `foo**bar**`):
 * that is arithmetic or an identifier far more often than emphasis, and chat apps do not format
 * inside such a word, so it is shown with its stars as written. Scripts written without spaces
 * (`这是**重要**的`) keep their emphasis.
 */
export function isIntraword(tokens: Token[], i: number): boolean {
  const before = tokens[i - 1]?.raw ?? "";
  const after = tokens[i + 1]?.raw ?? "";
  return /[A-Za-z0-9]$/.test(before) || /^[A-Za-z0-9]/.test(after);
}

/** The opening and closing markers of an emphasis token as the model wrote them (`*`, `__`, `~~`). */
export function emphasisMarkers(token: Tokens.Em | Tokens.Strong | Tokens.Del): [string, string] {
  const n = token.type === "strong" ? 2 : token.type === "em" ? 1 : /^~+/.exec(token.raw)?.[0].length ?? 2;
  return [token.raw.slice(0, n), token.raw.slice(-n)];
}

/** True when a link's URL may become a clickable link (web and mail links; `tg:` only where asked). */
export function isLinkable(href: string, extraSchemes: string[] = []): boolean {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(href)?.[1]?.toLowerCase();
  return scheme === "http" || scheme === "https" || scheme === "mailto" || (scheme !== undefined && extraSchemes.includes(scheme));
}

/** A link's target with character references resolved (autolinks are literal already). */
export function linkHref(token: Tokens.Link | Tokens.Image): string {
  return "autolink" in token && token.autolink ? token.href : decodeEntities(token.href);
}

/**
 * The visible text of inline tokens, formatting dropped: for table cells and link labels.
 * With `urls`, a link whose label differs from its target is followed by the target in parentheses.
 */
export function plainText(tokens: Token[] | undefined, options: { urls?: boolean } = {}): string {
  return (tokens ?? [])
    .map((token, i, all) => {
      const t = token as MarkedToken;
      switch (t.type) {
        case "text":
          return t.tokens ? plainText(t.tokens, options) : visibleText(t);
        case "escape":
        case "codespan":
          return t.text;
        case "br":
          return "\n";
        case "html":
          return t.raw;
        case "strong":
        case "em":
        case "del": {
          const inner = plainText(t.tokens, options);
          if (!isIntraword(all, i)) return inner;
          const [open, close] = emphasisMarkers(t);
          return open + inner + close;
        }
        case "link":
        case "image": {
          const href = linkHref(t);
          const label = plainText(t.tokens, options) || href;
          const autolink = "autolink" in t && t.autolink;
          return options.urls && !autolink && label !== href ? `${label} (${href})` : label;
        }
        default:
          return "tokens" in t && Array.isArray(t.tokens) ? plainText(t.tokens, options) : t.raw;
      }
    })
    .join("");
}

interface Block {
  text: string;
  /** Code blocks, tables and quotes keep their lines as they are inside a list item. */
  verbatim: boolean;
  /** What separates it from the block before: a line break, or a blank line where the model left one. */
  gap: string;
}

const newlines = (text: string) => text.split("\n").length - 1;
const trailingNewlines = (text: string) => /\n*$/.exec(text)![0].length;

function renderSequence(tokens: Token[], style: BlockStyle, quoted: boolean): Block[] {
  const out: Block[] = [];
  let pending = 0;
  for (const token of tokens) {
    if (token.type === "space") {
      pending += newlines(token.raw);
      continue;
    }
    const block = renderBlock(token as MarkedToken, style, quoted);
    if (!block) {
      pending += trailingNewlines(token.raw);
      continue;
    }
    out.push({ ...block, gap: out.length === 0 ? "" : pending >= 2 ? "\n\n" : "\n" });
    pending = trailingNewlines(token.raw);
  }
  return out;
}

function joinBlocks(blocks: Block[]): string {
  return blocks.map((block) => block.gap + block.text).join("");
}

function renderBlock(token: MarkedToken, style: BlockStyle, quoted: boolean): Omit<Block, "gap"> | undefined {
  const flowing = (text: string) => ({ text, verbatim: false });
  const verbatim = (text: string) => ({ text, verbatim: true });
  switch (token.type) {
    case "paragraph":
      return flowing(style.inline(token.tokens));
    case "text":
      return flowing(token.tokens ? style.inline(token.tokens) : style.text(decodeEntities(token.text)));
    case "heading":
      return flowing(style.heading(token.tokens, token.depth));
    case "code":
      return verbatim(style.code(token.text, (token.lang ?? "").trim().split(/\s+/)[0] ?? ""));
    case "blockquote":
      return verbatim(style.quote(joinBlocks(renderSequence(token.tokens, style, true)), quoted));
    case "list":
      return flowing(renderList(token, style, quoted));
    case "table":
      return verbatim(style.table(layOutTable(
        token.header.map((cell) => plainText(cell.tokens, { urls: true })),
        token.rows.map((row) => row.map((cell) => plainText(cell.tokens, { urls: true }))),
        token.align,
      )));
    case "hr":
      return flowing(style.rule);
    case "html":
      return flowing(style.html(token.raw.replace(/\n+$/, "")));
    case "def":
      return undefined;
    default:
      return flowing(style.text(token.raw.replace(/\n+$/, "")));
  }
}

function renderList(list: Tokens.List, style: BlockStyle, quoted: boolean): string {
  const start = typeof list.start === "number" ? list.start : 1;
  return list.items
    .map((item, n) => {
      const marker = list.ordered ? `${start + n}. ` : style.bullet;
      const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      const indent = " ".repeat(marker.length);
      const blocks = renderSequence(item.tokens.filter((t) => t.type !== "checkbox"), style, quoted);
      const body = blocks
        .map((block, b) => {
          const lines = block.text.split("\n");
          const shifted = block.verbatim ? lines : lines.map((line, l) => ((b === 0 && l === 0) || line === "" ? line : indent + line));
          return block.gap + shifted.join("\n");
        })
        .join("");
      return marker + box + body;
    })
    .join("\n");
}
