/**
 * Lays a Markdown table out as monospace text with aligned columns, for platforms that have no
 * tables (Telegram, Slack, Discord): the adapter wraps the result in its code block. Column widths
 * count what a monospace font shows — wide CJK characters and emoji take two cells, combining marks
 * none — so the columns line up in the chat, not only in the source.
 */

/** How a column's cells are aligned, as the table's delimiter row says (`:--`, `--:`, `:-:`). */
export type ColumnAlign = "left" | "right" | "center" | null;

const ZERO_WIDTH = /[\p{Mn}\p{Me}\u200B-\u200F\u2060\uFE00-\uFE0F]/u;
const EMOJI = /\p{Extended_Pictographic}/u;

function isWide(codePoint: number): boolean {
  return (
    (codePoint >= 0x1100 && codePoint <= 0x115f) ||
    (codePoint >= 0x2e80 && codePoint <= 0xa4cf && codePoint !== 0x303f) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0xfe30 && codePoint <= 0xfe4f) ||
    (codePoint >= 0xff00 && codePoint <= 0xff60) ||
    (codePoint >= 0xffe0 && codePoint <= 0xffe6) ||
    (codePoint >= 0x20000 && codePoint <= 0x3fffd)
  );
}

/** The number of monospace cells `text` takes on one line. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) {
    if (ZERO_WIDTH.test(ch)) continue;
    const codePoint = ch.codePointAt(0)!;
    width += isWide(codePoint) || (codePoint > 0xff && EMOJI.test(ch)) ? 2 : 1;
  }
  return width;
}

function pad(text: string, width: number, align: ColumnAlign): string {
  const room = width - displayWidth(text);
  if (room <= 0) return text;
  if (align === "right") return " ".repeat(room) + text;
  if (align === "center") {
    const left = Math.floor(room / 2);
    return " ".repeat(left) + text + " ".repeat(room - left);
  }
  return text + " ".repeat(room);
}

/**
 * Lays out a header row and body rows (cells already reduced to one line of plain text) as
 * `a | b` lines with a `--+--` rule under the header. Rows shorter than the header get empty
 * cells; trailing spaces are trimmed.
 */
export function layOutTable(header: string[], rows: string[][], align: ColumnAlign[]): string {
  const all = [header, ...rows];
  const columns = all.reduce((most, row) => Math.max(most, row.length), 0);
  const cell = (row: string[], i: number) => (row[i] ?? "").replace(/\s*\n\s*/g, " ").trim();
  const widths = Array.from({ length: columns }, (_, i) => all.reduce((most, row) => Math.max(most, displayWidth(cell(row, i))), 1));
  const line = (row: string[]) => widths.map((width, i) => pad(cell(row, i), width, align[i] ?? null)).join(" | ").trimEnd();
  const rule = widths.map((width) => "-".repeat(width)).join("-+-");
  return [line(header), rule, ...rows.map(line)].join("\n");
}
