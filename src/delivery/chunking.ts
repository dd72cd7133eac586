/**
 * Splits long text for a platform's message limit: prefers paragraph breaks, then line
 * breaks, then spaces; never cuts inside a code fence without closing it and reopening it in
 * the next part; a Markdown table cut between rows starts the next part with its header again
 * (each part is still a table, however the channel renders one); never cuts a character
 * (surrogate pair) in half.
 */

const FENCE = /^\s*(```+|~~~+)(.*)$/;

interface FenceState {
  marker: string;
  info: string;
}

/** The fence left open at the end of `text`, given the one open at its start. */
function fenceAfter(text: string, open: FenceState | undefined): FenceState | undefined {
  let state = open;
  for (const line of text.split("\n")) {
    const m = FENCE.exec(line);
    if (!m) continue;
    if (!state) state = { marker: m[1]!, info: m[2]!.trim() };
    else if (m[1]!.startsWith(state.marker[0]!) && m[1]!.length >= state.marker.length && m[2]!.trim() === "") state = undefined;
  }
  return state;
}

/** A table's delimiter row: `|---|:---:|`, `--- | ---`. */
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const isRow = (line: string) => line.includes("|") && line.trim() !== "";

/**
 * The header (head row and delimiter row) of the table still open at the end of `text`, given
 * the one carried into it; undefined when the text does not end inside a table's rows.
 */
function tableAfter(text: string, carried: string | undefined): string | undefined {
  let header = carried;
  const lines = text.replace(/\n$/, "").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!header && isRow(line) && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]!)) {
      header = `${line}\n${lines[i + 1]}`;
      i++;
    } else if (header && !isRow(line)) header = undefined;
  }
  return header;
}

function safeCut(text: string, at: number): number {
  // Do not split a surrogate pair.
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

function bestBreak(text: string, limit: number): number {
  if (text.length <= limit) return text.length;
  const window = text.slice(0, limit + 1);
  const min = Math.floor(limit * 0.4);
  for (const sep of ["\n\n", "\n", " "]) {
    const i = window.lastIndexOf(sep);
    if (i >= min) return i + sep.length;
  }
  return safeCut(text, limit);
}

/** Splits `text` into parts of at most `max` characters each. */
export function splitMessage(text: string, max: number): string[] {
  if (max < 16) throw new Error(`message limit too small: ${max}`);
  if (text.length <= max) return [text];
  const parts: string[] = [];
  let rest = text;
  let open: FenceState | undefined;
  let table: string | undefined;
  while (rest.length > 0) {
    const prefix = open ? `${open.marker}${open.info}\n` : table ? `${table}\n` : "";
    const closeReserve = 4 + (open?.marker.length ?? 3);
    if (prefix.length + rest.length <= max && !fenceAfter(rest, open)) {
      parts.push(prefix + rest);
      break;
    }
    const budget = max - prefix.length - closeReserve;
    let cut = bestBreak(rest, Math.max(1, budget));
    if (cut <= 0) cut = 1;
    const piece = rest.slice(0, cut);
    rest = rest.slice(cut);
    const after = fenceAfter(piece, open);
    // Rows go on in the next part: it repeats the header (a header too big to repeat is not).
    const header = after ? undefined : tableAfter(piece, table);
    table = header !== undefined && header.length <= max / 4 && isRow(rest.split("\n", 1)[0]!) ? header : undefined;
    let chunk = prefix + piece;
    if (after) chunk = `${chunk.replace(/\n?$/, "")}\n${after.marker}`;
    chunk = chunk.replace(/\s+$/, "");
    if (chunk.length > 0) parts.push(chunk);
    if (!after) rest = rest.replace(/^\n+/, "");
    open = after;
  }
  return parts;
}
