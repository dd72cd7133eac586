/**
 * Turns the bot's JSON log lines into a readable timeline for `gatehouse logs`: one line per
 * event with its time, trace id, event name and the fields that matter (durations as `ms`).
 */
import { z } from "zod";

/** One parsed log line; pino writes `time`, `level`, `msg` and whatever fields the caller logged. */
export interface LogEntry {
  time: string;
  level: number;
  msg?: string;
  event?: string;
  traceId?: string;
  sessionKey?: string;
  fields: Record<string, unknown>;
  raw: string;
}

const LineSchema = z.looseObject({
  time: z.union([z.string(), z.number()]),
  level: z.number(),
  msg: z.string().optional(),
  event: z.string().optional(),
  traceId: z.string().optional(),
  sessionKey: z.string().optional(),
});

const FRAME_KEYS = new Set(["time", "level", "msg", "event", "traceId", "sessionKey", "pid", "hostname"]);

/** Parses one line; undefined for lines that are not pino JSON (a partial last line, stray output). */
export function parseLogLine(raw: string): LogEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = LineSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const line = parsed.data;
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(line)) if (!FRAME_KEYS.has(k) && v !== undefined) fields[k] = v;
  return {
    time: typeof line.time === "number" ? new Date(line.time).toISOString() : line.time,
    level: line.level,
    msg: line.msg,
    event: line.event,
    traceId: line.traceId,
    sessionKey: line.sessionKey,
    fields,
    raw,
  };
}

/** Which lines `gatehouse logs` shows. */
export interface LogFilter {
  traceId?: string;
  sessionKey?: string;
  /** Only lines at or after this time (ms since epoch). */
  since?: number;
  /**
   * Trace ids seen with `sessionKey`: some lines of a turn carry only the trace id, and still
   * belong to the session. Filled by `matchesFilter` as lines go by.
   */
  sessionTraces?: Set<string>;
}

/** Whether an entry passes the filter (lines must be offered in the order they were written). */
export function matchesFilter(entry: LogEntry, filter: LogFilter): boolean {
  if (filter.traceId && entry.traceId !== filter.traceId) return false;
  if (filter.sessionKey) {
    filter.sessionTraces ??= new Set();
    if (entry.sessionKey === filter.sessionKey && entry.traceId) filter.sessionTraces.add(entry.traceId);
    const inSession = entry.sessionKey === filter.sessionKey || (entry.traceId !== undefined && filter.sessionTraces.has(entry.traceId));
    if (!inSession) return false;
  }
  if (filter.since !== undefined && Date.parse(entry.time) < filter.since) return false;
  return true;
}

/**
 * Reads `--since`: a duration back from `now` (`30s`, `10m`, `2h`, `1d`) or a date/time
 * (`2025-01-31T09:00`). Returns undefined when it is neither.
 */
export function parseSince(text: string, now = Date.now()): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/i.exec(text.trim());
  if (m) {
    const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2]!.toLowerCase() as "s" | "m" | "h" | "d"];
    return now - Number(m[1]) * unit;
  }
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : at;
}

const LEVEL_NAMES: Record<number, string> = { 40: "WARN", 50: "ERROR", 60: "FATAL" };

function formatValue(value: unknown): string {
  if (typeof value === "string") return /[\s"=]/.test(value) || value === "" ? JSON.stringify(value) : value;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

/** The fields of one entry as `key=value` pairs, durations first and written as `123ms`. */
export function formatFields(fields: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof fields.ms === "number") parts.push(`${fields.ms}ms`);
  for (const [k, v] of Object.entries(fields)) {
    if (k === "ms") continue;
    if (k === "err" && v && typeof v === "object" && "message" in v) {
      parts.push(`err=${formatValue((v as { message: unknown }).message)}`);
      continue;
    }
    parts.push(`${k}=${formatValue(v)}`);
  }
  return parts.join(" ");
}

/** Local wall-clock time with milliseconds, e.g. `09:41:07.123`; with the date when `withDate`. */
function clock(iso: string, withDate: boolean): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  return withDate ? `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}` : time;
}

export interface TimelineOptions {
  /** Show the date too (when the lines span more than one day). */
  withDate?: boolean;
  /** Time offset from this instant, e.g. `+1.204s` (used for one trace's story). */
  since?: number;
}

/** One timeline line: time, trace id (or `-`), level when warn or worse, event or message, fields. */
export function formatTimelineLine(entry: LogEntry, options: TimelineOptions = {}): string {
  const offset = options.since !== undefined ? ` ${`+${((Date.parse(entry.time) - options.since) / 1000).toFixed(3)}s`.padStart(9)}` : "";
  const level = LEVEL_NAMES[entry.level] ? `${LEVEL_NAMES[entry.level]} ` : "";
  const what = entry.event ?? entry.msg ?? "(log)";
  const fields = { ...entry.fields };
  if (entry.event && entry.msg && entry.msg !== entry.event) fields.msg = entry.msg;
  const rest = formatFields(fields);
  const trace = (entry.traceId ?? "-").padEnd(10);
  return `${clock(entry.time, Boolean(options.withDate))}${offset}  ${trace}  ${level}${what.padEnd(20)}${rest ? `  ${rest}` : ""}`.trimEnd();
}

/** A heading for one trace's story: its session, span and line count. */
export function traceHeading(traceId: string, entries: LogEntry[]): string {
  if (!entries.length) return `No log lines carry trace id ${traceId}.`;
  const first = Date.parse(entries[0]!.time);
  const last = Date.parse(entries.at(-1)!.time);
  const session = entries.find((e) => e.sessionKey)?.sessionKey;
  return `Trace ${traceId}${session ? ` (session ${session})` : ""}: ${entries.length} lines over ${((last - first) / 1000).toFixed(3)}s`;
}
