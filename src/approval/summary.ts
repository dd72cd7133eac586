/**
 * The argument summary shown on an approval card and in the audit log: compact JSON, values
 * under secret-looking keys masked, secret-shaped strings scrubbed, cut to a readable length.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../observe/receipts.ts";
import { scrubSecrets } from "../observe/scrub.ts";

const SECRET_KEY = /(token|secret|password|passwd|api[_-]?key|authorization|cookie|credential)/i;
const MAX_SUMMARY = 300;

function mask(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mask);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, SECRET_KEY.test(k) ? "[redacted]" : mask(v)]),
    );
  }
  return value;
}

/** A short, secret-free summary of a call's arguments. */
export function summarizeArgs(args: Record<string, unknown>): string {
  const text = scrubSecrets(JSON.stringify(mask(args)));
  return text.length > MAX_SUMMARY ? `${text.slice(0, MAX_SUMMARY - 1)}…` : text;
}

/** sha256 of the canonical JSON of a tool name and its exact arguments. */
export function hashCall(tool: string, args: Record<string, unknown>): string {
  return createHash("sha256").update(canonicalJson({ tool, args })).digest("hex");
}
