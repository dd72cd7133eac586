/**
 * Converts the model's Markdown to Telegram HTML (parse_mode "HTML") through the shared Markdown
 * walk. Only tags Telegram accepts are written — b, i, s, code, pre, a, blockquote — always
 * balanced and nested the way Telegram allows (no code inside a link, no quote inside a quote);
 * `&`, `<` and `>` are escaped everywhere else, so raw HTML from the model is shown as text.
 * Fences (``` and ~~~) become <pre><code class="language-x">, quotes <blockquote>, tables an
 * aligned <pre> block, lists "• " / "1. " lines, headings bold lines, images links.
 */
import {
  emphasisMarkers, isIntraword, isLinkable, linkHref, plainText, renderMarkdown, visibleText,
  type BlockStyle, type MarkedToken, type Token, type Tokens,
} from "../markdown-tokens.ts";

/** Escapes text for Telegram HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

/** The spans an inline token sits in, so a span is never opened twice and a link holds no code. */
interface Spans {
  b: boolean;
  i: boolean;
  s: boolean;
  link: boolean;
}

const NO_SPANS: Spans = { b: false, i: false, s: false, link: false };

function emphasis(token: Tokens.Strong | Tokens.Em | Tokens.Del, siblings: Token[], index: number, spans: Spans, tag: "b" | "i" | "s"): string {
  if (isIntraword(siblings, index)) {
    const [open, close] = emphasisMarkers(token);
    return escapeHtml(open) + inline(token.tokens, spans) + escapeHtml(close);
  }
  const content = inline(token.tokens, { ...spans, [tag]: true });
  return spans[tag] ? content : `<${tag}>${content}</${tag}>`;
}

function link(token: Tokens.Link | Tokens.Image, spans: Spans): string {
  const href = linkHref(token);
  const label = token.type === "image" ? escapeHtml(token.text || href) : inline(token.tokens, { ...spans, link: true }) || escapeHtml(href);
  if (spans.link || !isLinkable(href, ["tg"])) {
    const shown = token.type === "image" ? token.text : plainText(token.tokens);
    return shown && shown !== href ? `${label} (${escapeHtml(href)})` : escapeHtml(href);
  }
  return `<a href="${escapeAttribute(href)}">${label}</a>`;
}

function inline(tokens: Token[], spans: Spans): string {
  return tokens
    .map((token, index) => {
      const t = token as MarkedToken;
      switch (t.type) {
        case "text":
          return t.tokens ? inline(t.tokens, spans) : escapeHtml(visibleText(t));
        case "escape":
          return escapeHtml(t.text);
        case "codespan":
          return spans.link ? escapeHtml(t.text) : `<code>${escapeHtml(t.text)}</code>`;
        case "br":
          return "\n";
        case "strong":
          return emphasis(t, tokens, index, spans, "b");
        case "em":
          return emphasis(t, tokens, index, spans, "i");
        case "del":
          return emphasis(t, tokens, index, spans, "s");
        case "link":
        case "image":
          return link(t, spans);
        default:
          return escapeHtml(t.raw);
      }
    })
    .join("");
}

export const TELEGRAM_HTML: BlockStyle = {
  inline: (tokens) => inline(tokens, NO_SPANS),
  text: escapeHtml,
  heading(tokens) {
    const content = inline(tokens, { ...NO_SPANS, b: true });
    return content ? `<b>${content}</b>` : "";
  },
  code(code, lang) {
    const cls = /^[A-Za-z0-9_+-]+$/.test(lang) ? ` class="language-${lang}"` : "";
    return `<pre><code${cls}>${escapeHtml(code)}</code></pre>`;
  },
  quote: (content, nested) => (nested || !content ? content : `<blockquote>${content}</blockquote>`),
  table: (laidOut) => `<pre>${escapeHtml(laidOut)}</pre>`,
  html: escapeHtml,
  rule: "───",
  bullet: "• ",
};

/** Converts markdown to Telegram HTML. */
export function markdownToTelegramHtml(markdown: string): string {
  return renderMarkdown(markdown, TELEGRAM_HTML);
}
