/**
 * When something may next be sent, by key: the slots of limits several targets share (a Telegram
 * chat across its topics), holds after a 429 that named a conversation or the whole bot, and the
 * pacing of a target whose queue went away while its interval still runs. A time that has passed
 * says nothing, so it is forgotten: the clock holds only keys busy right now, however many
 * conversations the bot has ever served.
 */
/** Sweeping for size starts past this many keys. */
const MIN_SWEEP = 256;
/** Past times are also swept at most this often, so what a burst left behind goes once it is over. */
const SWEEP_EVERY_MS = 1000;

export class SendClock {
  readonly #next = new Map<string, number>();
  /** The size at which past times are swept out next (twice what was still live, so sweeping stays cheap). */
  #sweepAt = MIN_SWEEP;
  #nextTimedSweep = 0;

  /** When `key` is free (a time that may have passed; 0 when unknown). */
  freeAt(key: string): number {
    return this.#next.get(key) ?? 0;
  }

  /** Keeps `key` busy until `until`; an existing later time stays. */
  holdUntil(key: string, until: number, now = Date.now()): void {
    if (until <= now || until <= this.freeAt(key)) return;
    this.#next.set(key, until);
    this.#sweep(now);
  }

  /**
   * Takes the next slot of `key`: returns when it starts (now, or when the previous slot ends);
   * the slot after it starts `intervalMs` later. Reserving at once keeps the limit even when several
   * queues send at the same moment.
   */
  reserve(key: string, intervalMs: number, now = Date.now()): number {
    const at = Math.max(now, this.freeAt(key));
    this.#next.set(key, at + intervalMs);
    this.#sweep(now);
    return at;
  }

  /** Keys held (some may have passed and wait for the next sweep). */
  get size(): number {
    return this.#next.size;
  }

  #sweep(now: number): void {
    if (this.#next.size <= this.#sweepAt && now < this.#nextTimedSweep) return;
    for (const [key, at] of this.#next) if (at <= now) this.#next.delete(key);
    this.#sweepAt = Math.max(MIN_SWEEP, 2 * this.#next.size);
    this.#nextTimedSweep = now + SWEEP_EVERY_MS;
  }
}
