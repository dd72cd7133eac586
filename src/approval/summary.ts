/**
 * The argument summary shown on an approval card and in the audit log: compact JSON, values
 * under secret-looking keys masked, secret-shaped strings scrubbed, invisible characters made
 * visible, and cut to a stored length. Each platform's card cuts it further to fit its own limit
 * with `fitCardArguments`, which keeps the "deny if unsure" warning whatever is cut.
 */
import { hash as digestOf } from "node:crypto";
import { canonicalJson } from "../observe/canonical-json.ts";
import { scrubSecrets } from "../observe/scrub.ts";

const SECRET_KEY = /(token|secret|password|passwd|api[_-]?key|authorization|cookie|credential)/i;
/** Stored length in characters; every card shows as much of it as its platform allows. */
const MAX_SUMMARY = 4000;

/**
 * Characters a reader cannot see or that reorder what they see: controls, format characters
 * (bidi overrides, zero-width spaces and joiners, tags), line and paragraph separators, private
 * use and unassigned code points, spaces other than the ASCII space, variation selectors, fillers
 * that render blank, and `⟨` itself, so that a literal `⟨U+202E⟩` cannot pass for a revealed one.
 */
const HIDDEN_CHARS =
  "\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Co}\\p{Cn}\\u034F\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u2800\\u3164\\uFE00-\\uFE0F\\uFFA0\\u{E0100}-\\u{E01EF}";
const INVISIBLE = new RegExp(`[${HIDDEN_CHARS}\\u27E8]|[^\\P{Zs} ]`, "gu");
/** The same without `⟨`: for text that was revealed once already (or may have been). */
const INVISIBLE_UNREVEALED = new RegExp(`[${HIDDEN_CHARS}]|[^\\P{Zs} ]`, "gu");

/** One shown unit: a revealed `⟨U+XXXX⟩` token or one code point. */
const UNITS = /⟨U\+[0-9A-F]{4,6}⟩|[\s\S]/gu;

/** Text with every invisible or reordering character shown as `⟨U+XXXX⟩`; the rest unchanged. */
export function revealInvisible(text: string): string {
  return text.replace(INVISIBLE, codePointToken);
}

function codePointToken(ch: string): string {
  return `⟨U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

function mask(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mask);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, SECRET_KEY.test(k) ? "[redacted]" : mask(v)]),
    );
  }
  return value;
}

function units(text: string): string[] {
  return text.match(UNITS) ?? [];
}

/**
 * The secret-free summary of a call's arguments shown to an approver. When it cannot show everything
 * (too long, or values hidden as secrets) a second line says so, so that nobody approves what they
 * cannot see. Format: the arguments, then optionally `\n⚠️ …` notes (read back by `parseArgsSummary`).
 */
export function summarizeArgs(args: Record<string, unknown>): string {
  const text = revealInvisible(scrubSecrets(JSON.stringify(mask(args)) ?? ""));
  const { head, total } = headUnits(text, MAX_SUMMARY);
  const cut = total > MAX_SUMMARY;
  const notes: string[] = [];
  if (cut) notes.push(`⚠️ ${total - MAX_SUMMARY} more characters are not shown`);
  if (head.includes("[redacted]")) notes.push("⚠️ some values are hidden as [redacted]");
  return notes.length ? `${head}${cut ? "…" : ""}\n${notes.join("; ")}: deny if you are unsure what runs.` : head;
}

/** The first `max` units of `text` and how many it has in all (a long text is counted, not split into an array). */
function headUnits(text: string, max: number): { head: string; total: number } {
  const scan = new RegExp(UNITS.source, "gu");
  let count = 0;
  while (count < max && scan.exec(text)) count++;
  if (count < max || scan.lastIndex >= text.length) return { head: text, total: count };
  return { head: text.slice(0, scan.lastIndex), total: max + countUnits(text, scan.lastIndex) };
}

/** Units from `from` on: code points, each revealed `⟨U+XXXX⟩` counted once (every `⟨` starts one, see INVISIBLE). */
function countUnits(text: string, from: number): number {
  let units = 0;
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x27e8) {
      const close = text.indexOf("⟩", i);
      if (close > i) i = close;
    } else if (code >= 0xd800 && code <= 0xdbff) i++;
    units++;
  }
  return units;
}

/** A stored summary taken apart: the arguments as shown, and what the summary already left out. */
export interface ParsedArgsSummary {
  args: string;
  /** Characters of the arguments the stored summary does not hold. */
  hiddenChars: number;
  redacted: boolean;
}

/** Reads a summary made by `summarizeArgs` (or an older, plain one) back into its parts. */
export function parseArgsSummary(summary: string): ParsedArgsSummary {
  const newline = summary.indexOf("\n");
  const head = newline < 0 ? summary : summary.slice(0, newline);
  const notes = newline < 0 ? "" : summary.slice(newline + 1);
  const hidden = /⚠️ (\d+) more characters are not shown/.exec(notes);
  const hiddenChars = hidden ? Number(hidden[1]) : 0;
  // Summaries stored by older versions were not revealed; revealing again leaves revealed ones as they are.
  const args = (hiddenChars > 0 ? head.replace(/…$/, "") : head).replace(INVISIBLE_UNREVEALED, codePointToken);
  return { args, hiddenChars, redacted: notes.includes("[redacted]") || head.includes("[redacted]") };
}

/** What a card shows of the arguments: the (possibly cut) text, and the warning line, when one is due. */
export interface CardArguments {
  args: string;
  /** "⚠️ arguments cut: … — deny if you are unsure what runs." when anything is not shown. */
  warning?: string;
}

function warningFor(hiddenChars: number, redacted: boolean): string | undefined {
  const parts: string[] = [];
  if (hiddenChars > 0) parts.push(`arguments cut: ${hiddenChars} more character${hiddenChars === 1 ? " is" : "s are"} not shown`);
  if (redacted) parts.push("some values are hidden as [redacted]");
  return parts.length ? `⚠️ ${parts.join("; ")} — deny if you are unsure what runs.` : undefined;
}

/**
 * The longest part of the arguments for which the whole card still fits: `fits` renders the card
 * around a candidate and says whether the platform would take it (measured in the platform's own
 * unit). Whatever is cut, the warning names how much, and it is part of every candidate, so a card
 * never loses it to truncation. When even no arguments at all do not fit, the empty cut is returned.
 */
export function fitCardArguments(summary: string, fits: (shown: CardArguments) => boolean): CardArguments {
  const parsed = parseArgsSummary(summary);
  const whole: CardArguments = { args: parsed.args, warning: warningFor(parsed.hiddenChars, parsed.redacted) };
  if (fits(whole)) return whole;
  const all = units(parsed.args);
  const cutAt = (keep: number): CardArguments => ({
    args: `${all.slice(0, keep).join("")}…`,
    warning: warningFor(parsed.hiddenChars + all.length - keep, parsed.redacted),
  });
  let low = 0;
  let high = all.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(cutAt(mid))) low = mid;
    else high = mid - 1;
  }
  return cutAt(low);
}

/**
 * Puts a zero-width space between backticks that follow each other, so a code block around the text
 * cannot be closed early by the text itself; `separated` says whether that happened, so the card can
 * say so (what runs has no such spaces).
 */
export function separateBacktickRuns(text: string): { text: string; separated: boolean } {
  const separated = text.replace(/`(?=`)/g, "`\u200B");
  return { text: separated, separated: separated !== text };
}

/** The note a card shows when `separateBacktickRuns` changed its arguments. */
export const BACKTICK_NOTE = "ⓘ zero-width spaces keep the backticks above apart on this card; the call itself has none.";

/** sha256 of the canonical JSON of a tool name and its exact arguments. */
export function hashCall(tool: string, args: Record<string, unknown>): string {
  return hashCanonicalCall(tool, canonicalJson(args));
}

/** `hashCall` for arguments already in canonical JSON: the same text, `{"args":…,"tool":…}`, keys in order. */
export function hashCanonicalCall(tool: string, argsCanonical: string): string {
  return digestOf("sha256", `{"args":${argsCanonical},"tool":${JSON.stringify(tool)}}`, "hex");
}
