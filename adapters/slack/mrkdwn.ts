/**
 * Converts the model's Markdown to Slack mrkdwn through the shared Markdown walk: *bold*, _italic_,
 * ~strike~, `code`, ``` blocks (language dropped), <url|text> links with the URL whole (parentheses
 * included), `>` quotes line by line, tables as an aligned ``` block, headings as bold lines,
 * bullets as •. `***x***` becomes `*_x_*`. &, < and > are escaped everywhere Slack would read them
 * as control characters — code included, since Slack decodes entities there too — so raw HTML and
 * `<!channel>` from the model are shown as text.
 */
import { separateBacktickRuns } from "../../src/approval/summary.ts";
import {
  emphasisMarkers, isIntraword, isLinkable, linkHref, plainText, renderMarkdown, visibleText,
  type BlockStyle, type MarkedToken, type Token, type Tokens,
} from "../markdown-tokens.ts";

/** Escapes the three characters Slack treats as markup. */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A URL inside `<…|…>`: the characters that would end or split the link are percent-encoded. */
function slackUrl(href: string): string {
  return href.replace(/[<>|\s]/g, encodeURIComponent).replace(/&/g, "&amp;");
}

/** Code inside a ``` block, which a run of three backticks in it would close early. */
function blockCode(code: string): string {
  const escaped = escapeSlackText(code);
  return "```\n" + (escaped.includes("```") ? separateBacktickRuns(escaped).text : escaped) + "\n```";
}

/** The spans an inline token sits in: Slack cannot open a span inside the same span. */
interface Spans {
  bold: boolean;
  italic: boolean;
  strike: boolean;
}

const NO_SPANS: Spans = { bold: false, italic: false, strike: false };
const MARKERS = { bold: "*", italic: "_", strike: "~" } as const;

function emphasis(token: Tokens.Strong | Tokens.Em | Tokens.Del, siblings: Token[], index: number, spans: Spans, span: keyof Spans): string {
  if (isIntraword(siblings, index)) {
    const [open, close] = emphasisMarkers(token);
    return escapeSlackText(open) + inline(token.tokens, spans) + escapeSlackText(close);
  }
  const only = token.tokens.length === 1 ? (token.tokens[0] as MarkedToken) : undefined;
  // ***x*** parses as emphasis around strong; Slack reads `*_x_*` (bold outside) reliably.
  if (span === "italic" && only?.type === "strong" && !spans.bold && !spans.italic) {
    return `*_${inline(only.tokens, { ...spans, bold: true, italic: true })}_*`;
  }
  const content = inline(token.tokens, { ...spans, [span]: true });
  return spans[span] ? content : `${MARKERS[span]}${content}${MARKERS[span]}`;
}

function link(token: Tokens.Link | Tokens.Image): string {
  const href = linkHref(token);
  const label = (token.type === "image" ? token.text : plainText(token.tokens)) || href;
  if (!isLinkable(href)) return escapeSlackText(label === href ? href : `${label} (${href})`);
  if (label === href) return `<${slackUrl(href)}>`;
  return `<${slackUrl(href)}|${escapeSlackText(label.replace(/\s*\n\s*/g, " ")).replace(/\|/g, "¦")}>`;
}

function inline(tokens: Token[], spans: Spans): string {
  return tokens
    .map((token, index) => {
      const t = token as MarkedToken;
      switch (t.type) {
        case "text":
          return t.tokens ? inline(t.tokens, spans) : escapeSlackText(visibleText(t));
        case "escape":
          return escapeSlackText(t.text);
        case "codespan":
          return `\`${escapeSlackText(t.text)}\``;
        case "br":
          return "\n";
        case "strong":
          return emphasis(t, tokens, index, spans, "bold");
        case "em":
          return emphasis(t, tokens, index, spans, "italic");
        case "del":
          return emphasis(t, tokens, index, spans, "strike");
        case "link":
        case "image":
          return link(t);
        default:
          return escapeSlackText(t.raw);
      }
    })
    .join("");
}

export const SLACK_MRKDWN: BlockStyle = {
  inline: (tokens) => inline(tokens, NO_SPANS),
  text: escapeSlackText,
  heading(tokens) {
    const content = inline(tokens, { ...NO_SPANS, bold: true });
    return content ? `*${content}*` : "";
  },
  code: (code) => blockCode(code),
  quote: (content, nested) => (nested ? content : content.split("\n").map((line) => (line ? `> ${line}` : ">")).join("\n")),
  table: (laidOut) => blockCode(laidOut),
  html: escapeSlackText,
  rule: "―――",
  bullet: "• ",
};

/** Converts Markdown to Slack mrkdwn. */
export function markdownToMrkdwn(markdown: string): string {
  return renderMarkdown(markdown, SLACK_MRKDWN);
}
