/**
 * The SQLite store's recent history per session, held in memory so that a turn reads its history
 * without a query and without checking every row's format again. It holds only what this
 * connection wrote or read itself: `PRAGMA data_version` changes when any other connection (the
 * CLI, another process on the same file) commits, and then everything held is forgotten.
 * Messages are held frozen, and every load hands out the same objects in a new array: nobody can
 * change what the next reader gets, and what a turn worked out about a message (its token count)
 * holds for the next turn too. Bounded by the characters held; the least recently used sessions
 * go first.
 */
import type { ChatMessage } from "../model/types.ts";

/** At most this many characters of message JSON are held, over all sessions. */
const MAX_CHARS = 2_000_000;
/** A session's entry keeps at most this many of its latest messages. */
const MAX_MESSAGES = 1000;

interface Entry {
  /** The latest messages of the session's current history, oldest first, frozen. */
  messages: ChatMessage[];
  /** Each message's size in characters (of its JSON), for the bound. */
  sizes: number[];
  /** Whether `messages` is the whole current history (else only its latest part). */
  whole: boolean;
  chars: number;
}

/** Freezes a message and everything in it. */
function frozen<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
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
    return entry.messages.slice(-limit);
  }

  /**
   * What a query for the latest `limit` messages returned (oldest first), with the size of each
   * row. The messages are frozen here: the caller gets the objects the next loads hand out.
   */
  loaded(sessionKey: string, limit: number, messages: ChatMessage[], sizes: number[]): void {
    // The version was checked by the load that found nothing, just before the query.
    this.#put(sessionKey, messages.map(frozen), sizes, messages.length < limit);
  }

  /**
   * Messages this connection appended to the session's current history, as the rows it wrote
   * (`encoded`, as message-codec.ts writes them): held as frozen copies read from those. No version
   * check here: another connection's commit is noticed by the next load, which forgets everything.
   */
  appended(sessionKey: string, encoded: string[]): void {
    const entry = this.#entries.get(sessionKey);
    if (!entry) return;
    for (const body of encoded) {
      const { v: _version, ...message } = JSON.parse(body) as ChatMessage & { v: number };
      entry.messages.push(frozen(message as ChatMessage));
      entry.sizes.push(body.length);
      entry.chars += body.length;
      this.#chars += body.length;
    }
    while (entry.messages.length > MAX_MESSAGES) {
      entry.messages.shift();
      const dropped = entry.sizes.shift()!;
      entry.chars -= dropped;
      this.#chars -= dropped;
      entry.whole = false;
    }
    this.#touch(sessionKey, entry);
    if (entry.chars > MAX_CHARS / 4) this.#drop(sessionKey);
    this.#evict();
  }

  /** The session's history was started afresh by this connection (`/new`). */
  reset(sessionKey: string): void {
    this.#checkVersion();
    this.#put(sessionKey, [], [], true);
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

  #put(sessionKey: string, messages: ChatMessage[], sizes: number[], whole: boolean): void {
    this.#drop(sessionKey);
    const cut = Math.max(0, messages.length - MAX_MESSAGES);
    const kept = messages.slice(cut);
    const keptSizes = sizes.slice(cut);
    const chars = keptSizes.reduce((sum, n) => sum + n, 0);
    if (chars > MAX_CHARS / 4) return;
    this.#entries.set(sessionKey, { messages: kept, sizes: keptSizes, whole: whole && cut === 0, chars });
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
