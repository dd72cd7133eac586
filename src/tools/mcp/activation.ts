/**
 * Deferred activation state: which MCP tools `tool_search` has activated in each session.
 * Activated tools stay offered for the rest of the session (kept in memory; a restart starts
 * every session with only the tool names again).
 */

/** The per-session set of activated tool names, shared by the engine and `tool_search`. */
export class McpActivation {
  #bySession = new Map<string, Set<string>>();

  /** Marks `names` as active in `sessionKey`. */
  activate(sessionKey: string, names: string[]): void {
    let active = this.#bySession.get(sessionKey);
    if (!active) {
      active = new Set();
      this.#bySession.set(sessionKey, active);
    }
    for (const name of names) active.add(name);
  }

  /** The tool names activated so far in `sessionKey`. */
  active(sessionKey: string): ReadonlySet<string> {
    return this.#bySession.get(sessionKey) ?? new Set();
  }

  /** Forgets a session (when it is reset or deleted). */
  forget(sessionKey: string): void {
    this.#bySession.delete(sessionKey);
  }
}
