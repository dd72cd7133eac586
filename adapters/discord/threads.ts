/**
 * Where the bot works in a server: a mention in a text channel gets its own thread, started
 * lazily on the first thing the bot posts there. Discord gives a thread started from a message
 * the message's own id, so the thread id (and with it the session key) is known as soon as the
 * message arrives, before the thread exists. This file remembers which threads are still to be
 * started and which threads the bot already takes part in: the most recently used of each, so the
 * memory does not grow with every thread the bot has seen. Where the bot may not start threads (no
 * Create Public Threads permission in that channel), it answers in the channel itself, as replies
 * to the message that addressed it.
 */
import { DiscordAPIError, Routes, type REST } from "discord.js";
import { LruMap } from "../../src/lru-map.ts";

/** Discord: "A thread has already been created for this message". */
const THREAD_ALREADY_CREATED = 160004;
/** Discord: "Missing Permissions" (here: Create Public Threads). */
const MISSING_PERMISSIONS = 50013;
const MAX_REMEMBERED = 5000;

interface PendingThread {
  parentId: string;
  name: string;
  started?: Promise<Place>;
}

/** Where a reply goes: a channel (a thread is one), and for a thread that could not be started, the message to reply to. */
export interface Place {
  channelId: string;
  replyTo?: string;
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
   * Concurrent callers share one start. Returns where to post: the thread, or, where the bot may
   * not start one, the parent channel as a reply to the message (`onInline` is told once).
   */
  async ensure(rest: REST, channelId: string, onInline?: (parentId: string) => void): Promise<Place> {
    const pending = this.pending.get(channelId);
    if (!pending) return { channelId };
    pending.started ??= rest
      .post(Routes.threads(pending.parentId, channelId), { body: { name: pending.name, auto_archive_duration: 1440 } })
      .then(
        (): Place => ({ channelId }),
        (err: unknown): Place => {
          if (err instanceof DiscordAPIError && err.code === THREAD_ALREADY_CREATED) return { channelId };
          if (err instanceof DiscordAPIError && err.code === MISSING_PERMISSIONS) {
            onInline?.(pending.parentId);
            return { channelId: pending.parentId, replyTo: channelId };
          }
          pending.started = undefined;
          throw err;
        },
      );
    const place = await pending.started;
    // A reply in the channel keeps the thread pending: every later reply goes the same way.
    if (place.replyTo) return place;
    this.pending.delete(channelId);
    this.markJoined(channelId);
    return place;
  }
}

/** A thread title from the user's words: one line, at most 80 characters. */
export function threadName(text: string): string {
  const line = text.replace(/<[@#][!&]?\d+>/g, "").replace(/\s+/g, " ").trim();
  if (!line) return "Gatehouse";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
