/**
 * Where the bot works in a server: a mention in a text channel gets its own thread, started
 * lazily on the first thing the bot posts there. Discord gives a thread started from a message
 * the message's own id, so the thread id (and with it the session key) is known as soon as the
 * message arrives, before the thread exists. This file remembers which threads are still to be
 * started and which threads the bot already takes part in: the most recently used of each, so the
 * memory does not grow with every thread the bot has seen.
 */
import { DiscordAPIError, Routes, type REST } from "discord.js";
import { LruMap } from "../../src/lru-map.ts";

/** Discord: "A thread has already been created for this message". */
const THREAD_ALREADY_CREATED = 160004;
const MAX_REMEMBERED = 5000;

interface PendingThread {
  parentId: string;
  name: string;
  started?: Promise<void>;
}

/** Keeps thread bookkeeping for one adapter. */
export class ThreadTracker {
  private readonly pending = new LruMap<string, PendingThread>({ max: MAX_REMEMBERED });
  private readonly joined = new LruMap<string, true>({ max: MAX_REMEMBERED });

  /** Notes that `messageId` in `parentId` should become a thread once the bot answers. */
  expect(messageId: string, parentId: string, name: string): void {
    if (this.joined.has(messageId)) return;
    this.pending.set(messageId, { parentId, name: threadName(name) });
  }

  /** The bot posts (or posted) in this thread. */
  markJoined(channelId: string): void {
    this.joined.set(channelId, true);
  }

  /** Threads remembered, pending and joined (for tests: it stays bounded). */
  get size(): number {
    return this.pending.size + this.joined.size;
  }

  /** Whether the bot takes part in this thread (it started it, or posted in it). */
  isBotThread(channelId: string): boolean {
    return this.joined.has(channelId) || this.pending.has(channelId);
  }

  /**
   * Makes sure the channel a reply goes to exists: starts the thread if it is still pending.
   * Concurrent callers share one start. Returns the channel id to post to.
   */
  async ensure(rest: REST, channelId: string): Promise<string> {
    const pending = this.pending.get(channelId);
    if (!pending) return channelId;
    pending.started ??= rest
      .post(Routes.threads(pending.parentId, channelId), { body: { name: pending.name, auto_archive_duration: 1440 } })
      .then(
        () => undefined,
        (err: unknown) => {
          if (err instanceof DiscordAPIError && err.code === THREAD_ALREADY_CREATED) return;
          pending.started = undefined;
          throw err;
        },
      );
    await pending.started;
    this.pending.delete(channelId);
    this.markJoined(channelId);
    return channelId;
  }
}

/** A thread title from the user's words: one line, at most 80 characters. */
export function threadName(text: string): string {
  const line = text.replace(/<[@#][!&]?\d+>/g, "").replace(/\s+/g, " ").trim();
  if (!line) return "Gatehouse";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
