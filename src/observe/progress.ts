/**
 * Progress lines, formatted in one place: `⏳ tool: hint`, `✅ tool (1.2s)`,
 * `❌ tool (0.3s): reason`, `🔐 tool: waiting for approval`. Hints and reasons are scrubbed of
 * secrets and cut to a short length.
 */
import type { TurnEvent } from "../engine/types.ts";
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
      return `🔐 ${event.tool}: waiting for approval`;
    case "notice":
      return scrubSecrets(event.text);
    default:
      return undefined;
  }
}
