/**
 * MCP progress notifications as a call's progress text: `3/5`, `Indexing files (40%)`. A server may
 * report many times a second; the bot passes on at most one report per interval (the first at once),
 * so a chat thread gets a readable line, not a flood.
 */

/** The fields of a `notifications/progress` the bot reads. */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

const MESSAGE_MAX = 80;

/** The progress text a person reads, e.g. `Indexing files (2/5)`. */
export function progressText(p: McpProgress): string {
  const message = p.message?.replace(/\s+/g, " ").trim().slice(0, MESSAGE_MAX);
  let amount: string | undefined;
  if (p.total !== undefined && p.total > 0) {
    amount = Number.isInteger(p.progress) && Number.isInteger(p.total) ? `${p.progress}/${p.total}` : `${Math.round((100 * p.progress) / p.total)}%`;
  } else if (!message) {
    amount = `step ${p.progress}`;
  }
  if (message && amount) return `${message} (${amount})`;
  return message || amount || "";
}

/** Wraps `onProgress` so it is called at most once per `intervalMs` with a changed text. */
export function throttledProgress(onProgress: (text: string) => void, intervalMs = 1_000, now: () => number = Date.now): (p: McpProgress) => void {
  let last = -Infinity;
  let lastText = "";
  return (p) => {
    const text = progressText(p);
    const at = now();
    if (!text || text === lastText || at - last < intervalMs) return;
    last = at;
    lastText = text;
    try {
      onProgress(text);
    } catch {
      // A progress sink that fails must not fail the call.
    }
  };
}
