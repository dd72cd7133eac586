/**
 * Converts the model's markdown to Telegram HTML (parse_mode "HTML"): `&`, `<`, `>` escaped
 * everywhere; **bold**, *italic* or _italic_, ~~strike~~, `code`, fenced blocks, [text](url) and
 * headings mapped to the tags Telegram allows. Anything else stays as escaped text, so an answer
 * full of markup characters still sends.
 */

/** Escapes text for Telegram HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

const FENCE = /```([^\n`]*)\n([\s\S]*?)(?:```|$)/g;

/** Converts markdown to Telegram HTML. */
export function markdownToTelegramHtml(markdown: string): string {
  let out = "";
  let last = 0;
  for (const m of markdown.matchAll(FENCE)) {
    out += convertProse(markdown.slice(last, m.index));
    const lang = m[1]!.trim();
    const code = m[2]!.replace(/\n$/, "");
    const cls = /^[A-Za-z0-9_+-]+$/.test(lang) ? ` class="language-${lang}"` : "";
    out += `<pre><code${cls}>${escapeHtml(code)}</code></pre>`;
    last = m.index + m[0].length;
  }
  out += convertProse(markdown.slice(last));
  return out;
}

/** Inline spans that must not be touched by emphasis rules are parked behind placeholders. */
function convertProse(text: string): string {
  const parked: string[] = [];
  const park = (html: string) => `\u0000${parked.push(html) - 1}\u0000`;
  let s = text.replace(/\u0000/g, "");
  s = s.replace(/(`+)([^`\n]|[^`\n][\s\S]*?[^`\n])\1(?!`)/g, (_, _ticks: string, code: string) => park(`<code>${escapeHtml(code)}</code>`));
  s = s.replace(/\[([^\]\n]+)\]\(((?:https?|tg|mailto):[^)\s]+)\)/g, (_, label: string, url: string) => park(`<a href="${escapeAttribute(url)}">${escapeHtml(label)}</a>`));
  s = escapeHtml(s);
  s = s
    .split("\n")
    .map((line) => {
      const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
      return heading ? `<b>${heading[1]}</b>` : line;
    })
    .join("\n");
  const emphasized = emphasize(s);
  // Crossing markers (**a *b** c*) would give tags Telegram refuses; such a line keeps its stars.
  const safe = emphasized
    .split("\n")
    .map((line, i) => (balanced(line) ? line : s.split("\n")[i]!))
    .join("\n");
  return safe.replace(/\u0000(\d+)\u0000/g, (_, n: string) => parked[Number(n)]!);
}

function emphasize(s: string): string {
  return s
    .replace(/\*\*(?=\S)([^\n]*?\S)\*\*/g, "<b>$1</b>")
    .replace(/(^|[^\w])__(?=\S)([^\n]*?\S)__(?!\w)/g, "$1<b>$2</b>")
    .replace(/~~(?=\S)([^\n]*?\S)~~/g, "<s>$1</s>")
    .replace(/(^|[^\w*])\*(?=[^\s*])([^\n*]*?[^\s*])\*(?![\w*])/g, "$1<i>$2</i>")
    .replace(/(^|[^\w])_(?=[^\s_])([^\n_]*?[^\s_])_(?!\w)/g, "$1<i>$2</i>");
}

/** True when the b/i/s tags of a line nest properly. */
function balanced(line: string): boolean {
  const open: string[] = [];
  for (const m of line.matchAll(/<(\/?)([bis])>/g)) {
    if (!m[1]) open.push(m[2]!);
    else if (open.pop() !== m[2]) return false;
  }
  return open.length === 0;
}
