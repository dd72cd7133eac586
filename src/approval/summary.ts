/**
 * The argument summary shown on an approval card and in the audit log: compact JSON, values
 * under secret-looking keys masked, secret-shaped strings scrubbed, cut to a readable length.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../observe/receipts.ts";
import { scrubSecrets } from "../observe/scrub.ts";

const SECRET_KEY = /(token|secret|password|passwd|api[_-]?key|authorization|cookie|credential)/i;
/** Long enough for a real command, short enough for every platform's card (Discord: 2,000 per message). */
const MAX_SUMMARY = 1200;

function mask(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mask);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, SECRET_KEY.test(k) ? "[redacted]" : mask(v)]),
    );
  }
  return value;
}

/**
 * The secret-free summary of a call's arguments shown to an approver. When it cannot show everything
 * (too long, or values hidden as secrets) it says so, so that nobody approves what they cannot see.
 */
export function summarizeArgs(args: Record<string, unknown>): string {
  const text = scrubSecrets(JSON.stringify(mask(args)));
  const notes: string[] = [];
  let shown = text;
  if (text.length > MAX_SUMMARY) {
    shown = Array.from(text).slice(0, MAX_SUMMARY).join("");
    notes.push(`⚠️ ${text.length - shown.length} more characters are not shown`);
  }
  if (shown.includes("[redacted]")) notes.push("⚠️ some values are hidden as [redacted]");
  return notes.length ? `${shown}${text.length > MAX_SUMMARY ? "…" : ""}\n${notes.join("; ")}: deny if you are unsure what runs.` : shown;
}

/** sha256 of the canonical JSON of a tool name and its exact arguments. */
export function hashCall(tool: string, args: Record<string, unknown>): string {
  return createHash("sha256").update(canonicalJson({ tool, args })).digest("hex");
}
