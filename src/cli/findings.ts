/**
 * What `gatehouse doctor` reports: findings with a severity, what is wrong and how to fix it,
 * and the plain-text layout they are printed in.
 */

/** fatal: the bot would not start (or not serve a channel); warn: it starts, but something is off. */
export type Severity = "fatal" | "warn" | "ok" | "note";

/** One thing doctor checked or found. */
export interface Finding {
  severity: Severity;
  /** What was checked: a config key, a channel, the environment. */
  topic: string;
  /** What is wrong (or fine), in one sentence. */
  message: string;
  /** What to do about it. */
  fix?: string;
}

const TAGS: Record<Severity, string> = { fatal: "FATAL", warn: "WARN", ok: "ok", note: "note" };

/** Builds a finding; a shorthand that keeps check code to one line per finding. */
export const finding = (severity: Severity, topic: string, message: string, fix?: string): Finding => ({ severity, topic, message, ...(fix ? { fix } : {}) });

/** The findings as aligned lines (problems first, in order found), with a closing summary line. */
export function formatFindings(findings: readonly Finding[]): string {
  const order: Severity[] = ["fatal", "warn", "note", "ok"];
  const sorted = [...findings].sort((a, b) => order.indexOf(a.severity) - order.indexOf(b.severity));
  const lines: string[] = [];
  for (const f of sorted) {
    lines.push(`${TAGS[f.severity].padEnd(6)} ${f.topic}: ${f.message}`);
    if (f.fix) for (const [i, line] of f.fix.split("\n").entries()) lines.push(`${" ".repeat(7)}${i === 0 ? "fix: " : "     "}${line}`);
  }
  const fatal = findings.filter((f) => f.severity === "fatal").length;
  const warn = findings.filter((f) => f.severity === "warn").length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  lines.push("");
  if (fatal) lines.push(`${plural(fatal, "fatal problem")}, ${plural(warn, "warning")}: the bot will not start until the fatal problems are fixed.`);
  else if (warn) lines.push(`No fatal problems, ${plural(warn, "warning")}: the bot can start.`);
  else lines.push("No problems found.");
  return lines.join("\n");
}
