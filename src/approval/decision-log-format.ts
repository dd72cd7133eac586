/**
 * How `gatehouse approvals list` and `export` write decision-log entries: a readable table for a
 * terminal, JSON lines (each entry exactly as stored, with its link in the chain, so an exported
 * file can be verified again with `verify --file`), and CSV for a spreadsheet.
 */
import { eventLabel, personLabel, sourceLabel } from "./decision-log.ts";
import type { LoggedAuditEntry } from "../store/store.ts";

/** One entry as a JSON line: its fields and its link, without the store's row number. */
export function jsonLine(entry: LoggedAuditEntry): string {
  const { row: _row, ...rest } = entry;
  return JSON.stringify(rest);
}

/** The CSV columns, in order. */
export const CSV_COLUMNS = [
  "seq", "time", "at", "kind", "tool", "outcome", "source", "requesterId", "requesterName", "decidedById", "decidedByName",
  "actorId", "actorName", "argsSummary", "argsHash", "reason", "detail", "channel", "sessionKey", "traceId", "prevHash", "hash",
] as const;

/** The CSV header line. */
export function csvHeader(): string {
  return CSV_COLUMNS.join(",");
}

/**
 * One entry as a CSV line (RFC 4180: a field with a comma, quote or line break is quoted, quotes
 * doubled). A field that a spreadsheet would read as a formula (starting with = + - @, a tab or a
 * carriage return) gets a leading apostrophe: the arguments come from a model and must not run there.
 */
export function csvLine(entry: LoggedAuditEntry): string {
  const values: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    ...entry, time: new Date(entry.at).toISOString(),
  } as Record<(typeof CSV_COLUMNS)[number], unknown>;
  return CSV_COLUMNS.map((column) => csvField(values[column])).join(",");
}

function csvField(value: unknown): string {
  if (value === undefined || value === null) return "";
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const COLUMNS = [
  { title: "#", width: 5 },
  { title: "TIME (UTC)", width: 19 },
  { title: "EVENT", width: 17 },
  { title: "TOOL", width: 18 },
  { title: "ASKED BY", width: 20 },
  { title: "DECIDED BY", width: 20 },
  { title: "SOURCE", width: 15 },
] as const;

/** The table's heading line. */
export function tableHeader(): string {
  return [...COLUMNS.map((c) => c.title.padEnd(c.width)), "ARGUMENTS / DETAIL"].join("  ");
}

/** One entry as a table line: text a terminal cannot misread (control characters shown, one line). */
export function tableLine(entry: LoggedAuditEntry): string {
  const decidedBy = entry.kind === "approval.decided"
    ? personLabel(entry.decidedById ?? entry.actorId, entry.decidedByName ?? entry.actorName) ?? "-"
    : entry.kind === "approval.click_refused" ? personLabel(entry.actorId, entry.actorName) : undefined;
  // Entries from before the log named requesters say who asked as the request's actor.
  const asked = personLabel(entry.requesterId, entry.requesterName) ??
    (entry.kind === "approval.requested" ? personLabel(entry.actorId, entry.actorName) : undefined);
  const cells = [
    entry.seq === undefined ? "-" : String(entry.seq),
    new Date(entry.at).toISOString().slice(0, 19).replace("T", " "),
    eventLabel(entry),
    entry.tool ?? "",
    asked ?? "",
    decidedBy ?? "",
    sourceLabel(entry),
  ];
  const tail = [entry.argsSummary?.split("\n")[0], entry.reason, entry.kind === "approval.decided" ? undefined : entry.detail]
    .filter((part): part is string => Boolean(part))
    .join(" · ");
  return [...cells.map((cell, i) => fit(cell, COLUMNS[i]!.width)), fit(tail, 100)].join("  ").trimEnd();
}

/** Controls (escape sequences), format characters (bidi overrides) and line separators. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** The text shown in one cell: on one line, characters a terminal would act on shown as `⟨U+XXXX⟩`, cut to `width`. */
function fit(text: string, width: number): string {
  const shown = text
    .replace(/[\t\r\n]+/g, " ")
    .replace(UNSAFE, (ch) => `⟨U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`);
  return shown.length > width ? `${shown.slice(0, width - 1)}…` : shown.padEnd(width);
}
