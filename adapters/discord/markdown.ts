/**
 * Converts the model's (CommonMark) Markdown to what Discord renders, through the shared Markdown
 * walk. Most of it is written back as the model wrote it: headings #–###, lists, > quotes, code
 * fences, inline code and backslash escapes. What Discord lacks or reads differently is rewritten:
 * `__bold__` (underline on Discord) becomes `**bold**`, headings deeper than ### bold lines, `~~~`
 * and indented code ``` fences, tables an aligned code block, images links, rules a line, and a
 * link's URL is kept whole when it holds parentheses (a bare one goes in `<…>`, which Discord links
 * to its end). Link previews are not this file's concern: the outbound port suppresses embeds with
 * a message flag.
 */
import { separateBacktickRuns } from "../../src/approval/summary.ts";
import {
  emphasisMarkers, isIntraword, isLinkable, linkHref, renderMarkdown, visibleText,
  type BlockStyle, type MarkedToken, type Token, type Tokens,
} from "../markdown-tokens.ts";

/**
 * A link target Discord reads whole: whitespace and angle brackets are percent-encoded, and so are
 * parentheses unless they pair up one level deep (`Foo_(bar)`), which Discord's link syntax allows.
 */
function discordUrl(href: string): string {
  const safe = href.replace(/[\s<>]/g, encodeURIComponent);
  return /^(?:[^()]|\([^()]*\))*$/.test(safe) ? safe : safe.replace(/\(/g, "%28").replace(/\)/g, "%29");
}

/** A ``` fence around code, which a run of three backticks in it would close early. */
function fence(code: string, lang = ""): string {
  return "```" + lang + "\n" + (code.includes("```") ? separateBacktickRuns(code).text : code) + "\n```";
}

function emphasis(token: Tokens.Strong | Tokens.Em | Tokens.Del, siblings: Token[], index: number, inBold: boolean): string {
  const [open, close] = emphasisMarkers(token);
  if (isIntraword(siblings, index)) return open + inline(token.tokens, inBold) + close;
  if (token.type === "em") return open + inline(token.tokens, inBold) + close;
  if (token.type === "del") return `~~${inline(token.tokens, inBold)}~~`;
  const content = inline(token.tokens, true);
  return inBold ? content : `**${content}**`;
}

function link(token: Tokens.Link | Tokens.Image, inBold: boolean): string {
  // Discord's own linking of a bare URL stops before a closing parenthesis; <url> keeps it whole.
  if (token.type === "link" && token.autolink) return /^https?:\/\/\S*[()]/.test(token.raw) ? `<${token.href}>` : token.raw;
  const href = linkHref(token);
  const label = token.type === "image" ? token.text : inline(token.tokens, inBold);
  if (!label || label === href) return href;
  // Discord links only web addresses; anything else is shown with its target as text.
  return isLinkable(href) ? `[${label}](${discordUrl(href)})` : `${label} (${href})`;
}

function inline(tokens: Token[], inBold: boolean): string {
  return tokens
    .map((token, index) => {
      const t = token as MarkedToken;
      switch (t.type) {
        case "text":
          return t.tokens ? inline(t.tokens, inBold) : visibleText(t);
        case "escape":
        case "codespan":
          return t.raw;
        case "br":
          return "\n";
        case "html":
          return /^<br\s*\/?>$/i.test(t.raw) ? "\n" : t.raw;
        case "strong":
        case "em":
        case "del":
          return emphasis(t, tokens, index, inBold);
        case "link":
        case "image":
          return link(t, inBold);
        default:
          return t.raw;
      }
    })
    .join("");
}

export const DISCORD_MARKDOWN: BlockStyle = {
  inline: (tokens) => inline(tokens, false),
  text: (text) => text,
  heading(tokens, depth) {
    if (depth <= 3) return `${"#".repeat(depth)} ${inline(tokens, false)}`;
    const content = inline(tokens, true);
    return content ? `**${content}**` : "";
  },
  code: (code, lang) => fence(code, lang),
  quote: (content, nested) => (nested ? content : content.split("\n").map((line) => `> ${line}`).join("\n")),
  table: (laidOut) => fence(laidOut),
  html: (raw) => raw.replace(/<br\s*\/?>/gi, "\n"),
  rule: "───",
  bullet: "- ",
};

/** Converts markdown to Discord markdown. */
export function toDiscordMarkdown(markdown: string): string {
  return renderMarkdown(markdown, DISCORD_MARKDOWN);
}
