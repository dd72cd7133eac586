/**
 * Converts the model's Markdown to Slack mrkdwn: **bold** → *bold*, *italic* → _italic_,
 * ~~strike~~ → ~strike~, [text](url) → <url|text>, headings → bold lines, bullets → •,
 * fenced code kept (language tag dropped). &, < and > are escaped everywhere Slack would
 * read them as control characters — code included, since Slack decodes entities there too.
 */

/** Escapes the three characters Slack treats as markup. */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const HOLE = "\u0000";
const BOLD = "\u0001";

/** Converts inline Markdown on one line (no fences). */
function convertInline(line: string): string {
  const saved: string[] = [];
  const keep = (s: string) => `${HOLE}${saved.push(s) - 1}${HOLE}`;
  let out = line
    // inline code first, so nothing inside it is touched
    .replace(/`([^`\n]+)`/g, (_m, code: string) => keep(`\`${escapeSlackText(code)}\``))
    .replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+|mailto:[^\s)]+)\)/g, (_m, label: string, url: string) =>
      keep(`<${url.replace(/[<>|]/g, encodeURIComponent).replace(/&/g, "&amp;")}|${escapeSlackText(label).replace(/\|/g, "¦")}>`))
    .replace(/<(https?:\/\/[^\s>]+)>/g, (_m, url: string) => keep(`<${url.replace(/&/g, "&amp;")}>`));
  out = escapeSlackText(out)
    .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, `${BOLD}$1${BOLD}`)
    .replace(/__(?=\S)(.+?)(?<=\S)__/g, `${BOLD}$1${BOLD}`)
    .replace(/(^|[^*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])/g, "$1_$2_")
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "~$1~")
    .replaceAll(BOLD, "*");
  return out.replace(new RegExp(`${HOLE}(\\d+)${HOLE}`, "g"), (_m, i: string) => saved[Number(i)]!);
}

/** Converts one line outside code fences: headings, bullets, quotes, then inline markup. */
function convertLine(line: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return `*${convertInline(heading[1]!).replace(/^\*(.*)\*$/, "$1")}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2]!)}`;
  const quote = /^\s*>\s?(.*)$/.exec(line);
  if (quote) return `>${convertInline(quote[1]!)}`;
  if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) return "―――";
  return convertInline(line);
}

/** Converts Markdown to Slack mrkdwn. */
export function markdownToMrkdwn(markdown: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      out.push("```");
      inFence = !inFence;
      continue;
    }
    out.push(inFence ? escapeSlackText(line) : convertLine(line));
  }
  if (inFence) out.push("```");
  return out.join("\n");
}
