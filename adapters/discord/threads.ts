/**
 * Where the bot works in a server: a mention in a text channel gets its own thread, started
 * lazily on the first thing the bot posts there. Discord gives a thread started from a message
 * the message's own id, so the thread id (and with it the session key) is known as soon as the
 * message arrives, before the thread exists. This file remembers which threads are still to be
 * started and which threads the bot already takes part in.
 */
import { DiscordAPIError, Routes, type REST } from "discord.js";

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
  private readonly pending = new Map<string, PendingThread>();
  private readonly joined = new Set<string>();

  /** Notes that `messageId` in `parentId` should become a thread once the bot answers. */
  expect(messageId: string, parentId: string, name: string): void {
    if (this.joined.has(messageId)) return;
    this.pending.set(messageId, { parentId, name: threadName(name) });
    trim(this.pending);
  }

  /** The bot posts (or posted) in this thread. */
  markJoined(channelId: string): void {
    this.joined.add(channelId);
    if (this.joined.size > MAX_REMEMBERED) this.joined.delete(this.joined.values().next().value!);
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

function trim<K, V>(map: Map<K, V>): void {
  if (map.size > MAX_REMEMBERED) map.delete(map.keys().next().value!);
}
