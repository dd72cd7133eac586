/**
 * Converts the model's (CommonMark-ish) markdown to what Discord renders. Most of it passes
 * through; code fences and inline code are never touched. What Discord lacks or reads
 * differently is rewritten: `__bold__` (underline on Discord), headings deeper than ###,
 * tables (shown as a code block so columns stay aligned), images and horizontal rules.
 */

const FENCE = /^\s*(```|~~~)/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

/** Rewrites one line of prose, leaving inline code spans as they are. */
function convertInline(line: string): string {
  return line
    .split(/(`+[^`]*`+)/)
    .map((part, i) => {
      if (i % 2 === 1) return part;
      return part
        .replace(/!\[([^\]]*)\]\(([^)\s]+)[^)]*\)/g, (_m, alt: string, url: string) => (alt ? `[${alt}](${url})` : url))
        .replace(/(^|[^\w_])__(?=\S)([^_]+?)__(?=$|[^\w_])/g, "$1**$2**")
        .replace(/<br\s*\/?>/gi, "\n");
    })
    .join("");
}

function convertLine(line: string): string {
  const heading = /^(#{4,6})\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return `**${convertInline(heading[2]!)}**`;
  if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) return "───";
  return convertInline(line);
}

/** Converts markdown to Discord markdown. */
export function toDiscordMarkdown(markdown: string): string {
  const lines = markdown.replace(/\r\n/g, "\n").split("\n");
  const out: string[] = [];
  let fence: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const marker = FENCE.exec(line)?.[1];
    if (fence) {
      out.push(line);
      if (marker === fence) fence = undefined;
      continue;
    }
    if (marker) {
      fence = marker;
      out.push(line);
      continue;
    }
    if (TABLE_ROW.test(line) && TABLE_RULE.test(lines[i + 1] ?? "")) {
      const table: string[] = [];
      while (i < lines.length && TABLE_ROW.test(lines[i]!)) table.push(lines[i++]!);
      i--;
      out.push("```", ...table, "```");
      continue;
    }
    out.push(convertLine(line));
  }
  return out.join("\n");
}
