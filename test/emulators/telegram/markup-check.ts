/**
 * The Bot API's markup rules, as the emulator enforces them: Telegram HTML (allowed tags only,
 * balanced, `&` only as a known entity, no bare `<`) and the MarkdownV2 escaping rule. Each check
 * returns the visible text (what the message length limit counts) or the real error description.
 */

/** Tags Telegram accepts in parse_mode HTML. */
const ALLOWED_TAGS = new Set([
  "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler",
  "a", "code", "pre", "blockquote", "tg-emoji", "tg-time",
]);

const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

export type MarkupResult = { ok: true; visible: string } | { ok: false; description: string };

function byteOffset(text: string, index: number): number {
  return Buffer.byteLength(text.slice(0, index), "utf8");
}

function parseError(text: string, index: number, what: string): MarkupResult {
  return { ok: false, description: `Bad Request: can't parse entities: ${what} at byte offset ${byteOffset(text, index)}` };
}

/** Decodes one entity starting at `text[i] === "&"`; undefined when it is not a valid entity. */
function readEntity(text: string, i: number): { value: string; length: number } | undefined {
  const m = /^&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/.exec(text.slice(i, i + 12));
  if (!m) return undefined;
  const body = m[1]!;
  let value: string | undefined;
  if (body.startsWith("#x")) value = String.fromCodePoint(Number.parseInt(body.slice(2), 16));
  else if (body.startsWith("#")) value = String.fromCodePoint(Number.parseInt(body.slice(1), 10));
  else value = NAMED_ENTITIES[body];
  return value === undefined ? undefined : { value, length: m[0].length };
}

/** Checks Telegram HTML and returns the visible text. */
export function checkHtml(text: string): MarkupResult {
  const open: string[] = [];
  let visible = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "&") {
      const entity = readEntity(text, i);
      if (!entity) return parseError(text, i, `Can't find end of the entity starting`);
      visible += entity.value;
      i += entity.length;
      continue;
    }
    if (ch === ">") {
      visible += ch;
      i += 1;
      continue;
    }
    if (ch !== "<") {
      visible += ch;
      i += 1;
      continue;
    }
    const close = text.indexOf(">", i);
    if (close < 0) return parseError(text, i, "Unclosed start tag");
    const inner = text.slice(i + 1, close);
    const closing = /^\/([a-zA-Z][a-zA-Z0-9-]*)\s*$/.exec(inner);
    if (closing) {
      const name = closing[1]!.toLowerCase();
      if (open.length === 0 || open[open.length - 1] !== name) {
        return parseError(text, i, `Unmatched end tag "${name}"`);
      }
      open.pop();
      i = close + 1;
      continue;
    }
    const start = /^([a-zA-Z][a-zA-Z0-9-]*)(\s+[^<>]*)?$/.exec(inner);
    if (!start) return parseError(text, i, `Unsupported start tag "${inner.split(/\s/)[0] ?? ""}"`);
    const name = start[1]!.toLowerCase();
    if (!ALLOWED_TAGS.has(name)) return parseError(text, i, `Unsupported start tag "${name}"`);
    const attrs = start[2] ?? "";
    for (let a = attrs.indexOf("&"); a >= 0; a = attrs.indexOf("&", a + 1)) {
      if (!readEntity(attrs, a)) return parseError(text, i, "Can't find end of the entity starting");
    }
    open.push(name);
    i = close + 1;
  }
  if (open.length > 0) {
    return { ok: false, description: `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "${open[open.length - 1]}"` };
  }
  return { ok: true, visible };
}

const MDV2_RESERVED = "_*[]()~`>#+-=|{}.!";
const MDV2_MARKERS = new Set(["_", "*", "~", "`", "[", "]", "(", ")", "|"]);

/**
 * Checks the MarkdownV2 escaping rule: every reserved character that is not formatting must be
 * escaped with a backslash. Formatting markers must pair up.
 */
export function checkMarkdownV2(text: string): MarkupResult {
  let visible = "";
  const counts = new Map<string, number>();
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\\") {
      const next = text[i + 1];
      if (next !== undefined) visible += next;
      i += 1;
      continue;
    }
    if (MDV2_MARKERS.has(ch)) {
      counts.set(ch, (counts.get(ch) ?? 0) + 1);
      continue;
    }
    if (MDV2_RESERVED.includes(ch)) {
      return { ok: false, description: `Bad Request: can't parse entities: Character '${ch}' is reserved and must be escaped with the preceding '\\'` };
    }
    visible += ch;
  }
  for (const [marker, n] of counts) {
    if ((marker === "_" || marker === "*" || marker === "~" || marker === "`") && n % 2 !== 0) {
      return { ok: false, description: `Bad Request: can't parse entities: Can't find end of ${marker === "*" ? "Bold" : marker === "_" ? "Italic" : marker === "~" ? "Strikethrough" : "Code"} entity at byte offset ${byteOffset(text, text.lastIndexOf(marker))}` };
    }
  }
  return { ok: true, visible };
}
