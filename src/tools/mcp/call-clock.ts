/**
 * The idle timeout of one MCP tool call: it fires when the server has been silent for `timeoutMs`.
 * Every progress report starts the wait again, and while the server waits on the bot (a question
 * to a person, a sampling request) the clock is held: that time is the bot's, not the server's.
 */

/** One call's idle deadline; `signal` aborts when it passes. */
export class CallClock {
  readonly #timeoutMs: number;
  readonly #controller = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #holds = 0;
  #stopped = false;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.#arm();
  }

  /** Aborts once the call was idle for the whole timeout. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True once the idle timeout passed. */
  get expired(): boolean {
    return this.#controller.signal.aborted;
  }

  /** The server showed it is working (a progress report): the wait starts again. */
  touch(): void {
    if (this.#holds === 0) this.#arm();
  }

  /** Stops the clock while the server waits on the bot; the returned function starts it again (once). */
  hold(): () => void {
    this.#holds++;
    clearTimeout(this.#timer);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds--;
      if (this.#holds === 0) this.#arm();
    };
  }

  /** The call ended: no more firing. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#stopped || this.expired) return;
    this.#timer = setTimeout(() => this.#controller.abort(new Error(`idle for ${this.#timeoutMs} ms`)), this.#timeoutMs);
    this.#timer.unref();
  }
}
