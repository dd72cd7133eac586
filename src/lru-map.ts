/**
 * A map that keeps at most `max` entries, forgetting the least recently used one first, and
 * optionally forgets an entry `ttlMs` after it was set. For per-session and per-thread memory that
 * must not grow with the number of sessions a long-running bot has seen: thread bookkeeping,
 * name caches, activation sets.
 */
export interface LruMapOptions {
  /** How many entries are kept at most. */
  max: number;
  /** Entries older than this (since they were set) read as absent. */
  ttlMs?: number;
  /** The clock, for tests (default Date.now). */
  now?: () => number;
}

export class LruMap<K, V> {
  // A Map iterates in insertion order, so re-inserting an entry on use keeps the oldest first.
  readonly #entries = new Map<K, { value: V; setAt: number }>();
  readonly #max: number;
  readonly #ttlMs: number | undefined;
  readonly #now: () => number;

  constructor(options: LruMapOptions) {
    if (!(options.max >= 1)) throw new Error(`LruMap needs max >= 1 (got ${options.max})`);
    this.#max = options.max;
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
  }

  /** The value of `key`, marking it as just used; undefined when absent or expired. */
  get(key: K): V | undefined {
    return this.#use(key)?.value;
  }

  /** Whether `key` is present (and not expired), marking it as just used. */
  has(key: K): boolean {
    return this.#use(key) !== undefined;
  }

  /** Sets `key`, marking it as just used; forgets the least recently used entry past `max`. */
  set(key: K, value: V): this {
    this.#entries.delete(key);
    this.#entries.set(key, { value, setAt: this.#now() });
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  /** Entries held, expired ones included until they are next looked at or pushed out. */
  get size(): number {
    return this.#entries.size;
  }

  /** The live entry of `key`, moved to the most recently used end; an expired one is dropped. */
  #use(key: K): { value: V; setAt: number } | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (this.#ttlMs !== undefined && this.#now() - entry.setAt >= this.#ttlMs) return undefined;
    this.#entries.set(key, entry);
    return entry;
  }
}
