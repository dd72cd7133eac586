/**
 * Progress text, formatted in one place: the lines `⏳ tool: hint`, `✅ tool (1.2s)`,
 * `❌ tool (0.3s): reason`, `🔐 tool: waiting for approval`, the decision on a call that waited,
 * and the one-line summary that closes a task's status message ("✅ 12 steps in 48 s · 1 approval").
 * Hints, progress texts and reasons are scrubbed of secrets and cut to a short length.
 */
import type { TurnEvent } from "../engine/types.ts";
import type { ApprovalDecision } from "../approval/types.ts";
import { scrubSecrets } from "./scrub.ts";

const HINT_MAX = 80;
const REASON_MAX = 160;

function cut(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** The progress line for a turn event, or undefined for events that are not progress. */
export function progressLine(event: TurnEvent): string | undefined {
  switch (event.type) {
    case "tool.start":
      return event.hint ? `⏳ ${event.tool}: ${cut(scrubSecrets(event.hint), HINT_MAX)}` : `⏳ ${event.tool}`;
    case "tool.progress":
      return `⏳ ${event.tool}: ${cut(scrubSecrets(event.text), HINT_MAX)}`;
    case "tool.finish": {
      const receipt = event.receipt ? ` · receipt ${event.receipt}` : "";
      if (event.success) return `✅ ${event.tool} (${seconds(event.ms)})${receipt}`;
      const reason = event.error ? `: ${cut(scrubSecrets(event.error), REASON_MAX)}` : "";
      return `❌ ${event.tool} (${seconds(event.ms)})${reason}`;
    }
    case "approval.waiting":
      return waitingLine(event.tool);
    case "notice":
      return scrubSecrets(event.text);
    default:
      return undefined;
  }
}

/** The line of a call waiting for a person, with a link to its card where the platform has one. */
export function waitingLine(tool: string, cardLink?: string): string {
  return cardLink ? `🔐 ${tool}: waiting for approval · [open the card](${cardLink})` : `🔐 ${tool}: waiting for approval`;
}

/** The line saying how the wait for a person ended, for the call that waited. */
export function decisionLine(tool: string, decision: ApprovalDecision): string {
  const by = decision.by ? ` by ${decision.by.name ?? decision.by.id}` : "";
  switch (decision.outcome) {
    case "approved":
      return `🔓 ${tool}: approved${by}`;
    case "always":
      return `🔓 ${tool}: always allowed${by}`;
    case "denied":
      return `🚫 ${tool}: denied${by}`;
    case "timeout":
      return `⌛ ${tool}: no answer in time, not run`;
    case "cancelled":
      return `⏹ ${tool}: not run, the task was stopped`;
    case "unavailable":
      return `🚫 ${tool}: not run${decision.reason ? `: ${cut(scrubSecrets(decision.reason), REASON_MAX)}` : ""}`;
  }
}

/** What a finished task did, for its summary line. */
export interface TaskTally {
  /** How the turn ended. */
  end: "done" | "cancelled" | "failed" | "stopped";
  /** Tool calls that ran. */
  steps: number;
  /** Of those, the ones that failed. */
  failed: number;
  ms: number;
  /** Waits for a person's decision. */
  approvals: number;
  denied: number;
  timedOut: number;
}

/** A duration as people read it: "0.4 s", "48 s", "3 min 5 s". */
export function readableDuration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The one-line summary of a finished task: "✅ 12 steps in 48 s · 1 approval · 1 denied". */
export function summaryLine(t: TaskTally): string {
  const lead = { done: "✅", stopped: "⏹", cancelled: "⏹", failed: "⚠️" }[t.end];
  const what = t.end === "done" ? plural(t.steps, "step") : `${t.end === "failed" ? "Failed" : "Stopped"} after ${plural(t.steps, "step")}`;
  const parts = [`${lead} ${what} in ${readableDuration(t.ms)}`];
  if (t.failed) parts.push(`${t.failed} failed`);
  if (t.approvals) parts.push(plural(t.approvals, "approval"));
  if (t.denied) parts.push(`${t.denied} denied`);
  if (t.timedOut) parts.push(`${t.timedOut} timed out`);
  return parts.join(" · ");
}
