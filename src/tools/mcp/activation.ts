/**
 * Deferred activation state: which MCP tools `tool_search` has activated in each session.
 * Activated tools stay offered for the rest of the session. Memory keeps the sessions used most
 * recently (`maxSessions`); the caller keeps the full record elsewhere (the store) and, through
 * `load`, brings a forgotten session back with `restore` before its turn.
 */
import { LruMap } from "../../lru-map.ts";

export interface McpActivationOptions {
  /** Sessions kept in memory (default 10,000); the least recently used beyond it are forgotten here. */
  maxSessions?: number;
  /** Reads what a session activated from where it is kept, for a session not in memory. */
  load?: (sessionKey: string) => Promise<string[] | undefined>;
}

interface SessionActivation {
  names: Set<string>;
  /** False while activations kept elsewhere may be missing from `names` (made after the session was forgotten). */
  complete: boolean;
}

/** The per-session set of activated tool names, shared by the engine and `tool_search`. */
export class McpActivation {
  readonly #bySession: LruMap<string, SessionActivation>;
  readonly #load: McpActivationOptions["load"];

  constructor(options: McpActivationOptions = {}) {
    this.#bySession = new LruMap({ max: options.maxSessions ?? 10_000 });
    this.#load = options.load;
  }

  /** Marks `names` as active in `sessionKey`. */
  activate(sessionKey: string, names: string[]): void {
    let active = this.#bySession.get(sessionKey);
    if (!active) {
      active = { names: new Set(), complete: !this.#load };
      this.#bySession.set(sessionKey, active);
    }
    for (const name of names) active.names.add(name);
  }

  /** The tool names activated so far in `sessionKey`, as far as memory knows (see `restore`). */
  active(sessionKey: string): ReadonlySet<string> {
    return this.#bySession.get(sessionKey)?.names ?? new Set();
  }

  /**
   * Brings a session's activations back into memory through `load` when memory may not hold them
   * all (the session was forgotten, or never seen since the start). Call it before a turn, and before
   * saving `active()` over the stored record. Without `load` it does nothing.
   */
  async restore(sessionKey: string): Promise<void> {
    const load = this.#load;
    if (!load || this.#bySession.get(sessionKey)?.complete) return;
    const stored = await load(sessionKey);
    const active = this.#bySession.get(sessionKey) ?? { names: new Set<string>(), complete: false };
    for (const name of stored ?? []) active.names.add(name);
    active.complete = true;
    this.#bySession.set(sessionKey, active);
  }

  /** Forgets a session (when it is reset or deleted). */
  forget(sessionKey: string): void {
    this.#bySession.delete(sessionKey);
  }

  /** Sessions held in memory. */
  get size(): number {
    return this.#bySession.size;
  }
}
