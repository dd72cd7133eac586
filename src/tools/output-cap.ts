/**
 * Collects a stream of text while keeping memory bounded: the first part and the last part
 * are kept, the middle is counted and replaced by a marker. Long command output keeps both
 * how it started and how it ended, which is where errors usually are.
 */

/** Bounded head-and-tail text collector. */
export class HeadTailBuffer {
  readonly #headMax: number;
  readonly #tailMax: number;
  #head = "";
  #tail = "";
  #dropped = 0;

  /** `maxChars` is the most characters kept, split evenly between head and tail. */
  constructor(maxChars: number) {
    this.#headMax = Math.ceil(maxChars / 2);
    this.#tailMax = Math.floor(maxChars / 2);
  }

  /** Adds text in arrival order. */
  push(text: string): void {
    if (this.#head.length < this.#headMax) {
      const room = this.#headMax - this.#head.length;
      this.#head += text.slice(0, room);
      text = text.slice(room);
    }
    if (!text) return;
    this.#tail += text;
    if (this.#tail.length > this.#tailMax) {
      const excess = this.#tail.length - this.#tailMax;
      this.#dropped += excess;
      this.#tail = this.#tail.slice(excess);
    }
  }

  /** Whether anything was cut. */
  get truncated(): boolean {
    return this.#dropped > 0;
  }

  /** The kept text, with a marker where the middle was cut. */
  toString(): string {
    if (this.#dropped === 0) return this.#head + this.#tail;
    return `${this.#head}\n[… ${this.#dropped} characters of output cut …]\n${this.#tail}`;
  }
}
