/**
 * Spans of time as the config writes them ("30m", "12h", "7d", "2w") and as a person reads them
 * back ("7 d", "12 h", "30 min"), for how long a remembered "Always" holds (`approval.alwaysTtl`).
 */

/** A span the config accepts: a whole number and one unit (s, m, h, d or w). */
export const SPAN_PATTERN = /^\s*(\d+)\s*(s|m|h|d|w)\s*$/;

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** The span in milliseconds, or undefined when `text` is not one (or is zero). */
export function parseSpan(text: string): number | undefined {
  const m = SPAN_PATTERN.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined;
}

/** A span as a person reads it, in its largest whole unit: "7 d", "36 h", "30 min", "45 s". */
export function formatSpan(ms: number): string {
  const units: Array<[number, string]> = [[86_400_000, "d"], [3_600_000, "h"], [60_000, "min"], [1000, "s"]];
  for (const [size, name] of units) if (ms >= size && ms % size === 0) return `${ms / size} ${name}`;
  for (const [size, name] of units) if (ms >= size) return `${Math.round(ms / size)} ${name}`;
  return "1 s";
}
