/**
 * Where the answer to a slash command can go when the bot cannot post in the conversation it came
 * from: a DM between two people, a private channel the bot was never added to, a public channel it
 * has not joined. Slack gives each command a `response_url` that works anywhere for 30 minutes, up
 * to five times; the adapter keeps the latest per conversation and answers through it, visible
 * only to the person who ran the command, when chat.postMessage refuses the conversation.
 */
import { LruMap } from "../../src/lru-map.ts";

/** Slack's limits on one response_url. */
const VALID_MS = 30 * 60_000;
const USES = 5;

/** chat.postMessage's refusals that mean "the bot is not in this conversation". */
export const NOT_A_MEMBER = new Set(["channel_not_found", "not_in_channel"]);

export class CommandReplies {
  private readonly urls = new LruMap<string, { url: string; until: number; left: number }>({ max: 1_000 });

  /** Keeps the response_url of a command run in `conversationId`. */
  remember(conversationId: string, url: string, now = Date.now()): void {
    this.urls.set(conversationId, { url, until: now + VALID_MS, left: USES });
  }

  /** A response_url still good for one answer in `conversationId`, counted as used. */
  take(conversationId: string, now = Date.now()): string | undefined {
    const entry = this.urls.get(conversationId);
    if (!entry || entry.until <= now || entry.left <= 0) return undefined;
    entry.left -= 1;
    return entry.url;
  }
}

/** Posts `text` through a response_url, seen only by the person who ran the command. */
export async function answerPrivately(url: string, text: string): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ response_type: "ephemeral", text }),
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`Slack response_url answered ${res.status}`);
  await res.body?.cancel();
}
