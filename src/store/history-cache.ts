/**
 * The SQLite store's recent history per session, held in memory so that a turn reads its history
 * without a query and without checking every row's format again. It holds only what this
 * connection wrote or read itself: `PRAGMA data_version` changes when any other connection (the
 * CLI, another process on the same file) commits, and then everything held is forgotten.
 * Messages are kept as the JSON of their decoded form, so every load returns fresh objects.
 * Bounded by the characters held; the least recently used sessions go first.
 */
import type { ChatMessage } from "../model/types.ts";

/** At most this many characters of message JSON are held, over all sessions. */
const MAX_CHARS = 2_000_000;
/** A session's entry keeps at most this many of its latest messages. */
const MAX_MESSAGES = 1000;

interface Entry {
  /** The latest messages of the session's current history, oldest first, as JSON. */
  messages: string[];
  /** Whether `messages` is the whole current history (else only its latest part). */
  whole: boolean;
  chars: number;
}

export class HistoryCache {
  // A Map iterates in insertion order: re-inserting an entry on use keeps the least recently used first.
  readonly #entries = new Map<string, Entry>();
  readonly #dataVersion: () => number;
  #version: number | undefined;
  #chars = 0;

  /** `dataVersion`: reads `PRAGMA data_version` on the store's connection. */
  constructor(dataVersion: () => number) {
    this.#dataVersion = dataVersion;
  }

  /** The session's latest `limit` messages, or undefined when they are not all held. */
  load(sessionKey: string, limit: number): ChatMessage[] | undefined {
    this.#checkVersion();
    const entry = this.#entries.get(sessionKey);
    if (!entry || (!entry.whole && entry.messages.length < limit)) return undefined;
    this.#touch(sessionKey, entry);
    return entry.messages.slice(-limit).map((json) => JSON.parse(json) as ChatMessage);
  }

  /** What a query for the latest `limit` messages returned (oldest first). */
  loaded(sessionKey: string, limit: number, messages: ChatMessage[]): void {
    this.#checkVersion();
    this.#put(sessionKey, messages.map((m) => JSON.stringify(m)), messages.length < limit);
  }

  /** Messages this connection appended to the session's current history. */
  appended(sessionKey: string, messages: ChatMessage[]): void {
    this.#checkVersion();
    const entry = this.#entries.get(sessionKey);
    if (!entry) return;
    for (const m of messages) {
      const json = JSON.stringify(m);
      entry.messages.push(json);
      entry.chars += json.length;
      this.#chars += json.length;
    }
    while (entry.messages.length > MAX_MESSAGES) {
      const dropped = entry.messages.shift()!;
      entry.chars -= dropped.length;
      this.#chars -= dropped.length;
      entry.whole = false;
    }
    this.#touch(sessionKey, entry);
    if (entry.chars > MAX_CHARS / 4) this.#drop(sessionKey);
    this.#evict();
  }

  /** The session's history was started afresh by this connection (`/new`). */
  reset(sessionKey: string): void {
    this.#checkVersion();
    this.#put(sessionKey, [], true);
  }

  forget(sessionKey: string): void {
    this.#drop(sessionKey);
  }

  #checkVersion(): void {
    const version = this.#dataVersion();
    if (version === this.#version) return;
    this.#entries.clear();
    this.#chars = 0;
    this.#version = version;
  }

  #put(sessionKey: string, messages: string[], whole: boolean): void {
    this.#drop(sessionKey);
    const kept = messages.length > MAX_MESSAGES ? messages.slice(-MAX_MESSAGES) : messages;
    const chars = kept.reduce((sum, json) => sum + json.length, 0);
    if (chars > MAX_CHARS / 4) return;
    this.#entries.set(sessionKey, { messages: kept, whole: whole && kept.length === messages.length, chars });
    this.#chars += chars;
    this.#evict();
  }

  /** Forgets the least recently used sessions until what is held fits. */
  #evict(): void {
    for (const [key, entry] of this.#entries) {
      if (this.#chars <= MAX_CHARS) break;
      this.#entries.delete(key);
      this.#chars -= entry.chars;
    }
  }

  #touch(sessionKey: string, entry: Entry): void {
    this.#entries.delete(sessionKey);
    this.#entries.set(sessionKey, entry);
  }

  #drop(sessionKey: string): void {
    const entry = this.#entries.get(sessionKey);
    if (!entry) return;
    this.#entries.delete(sessionKey);
    this.#chars -= entry.chars;
  }
}
