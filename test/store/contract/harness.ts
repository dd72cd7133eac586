/** What the store contract needs from a store implementation under test. */
import type { Store } from "../../../src/store/store.ts";

/** Options every store takes when it opens. */
export interface OpenOptions {
  /** Clock for the timestamps the interface does not pass in (history, sessions). */
  now?: () => number;
}

/** Opens one kind of store, fresh or again at the same place (as a restarted process would). */
export interface StoreHarness {
  /** A new, empty place for a store: a data folder, or a database. */
  freshLocation(): Promise<string>;
  /** Opens the store kept at `location`, creating it when it is new. */
  open(location: string, options?: OpenOptions): Promise<Store>;
}

/** Opens a store at a fresh location. */
export async function openFresh(harness: StoreHarness, options?: OpenOptions): Promise<Store> {
  return harness.open(await harness.freshLocation(), options);
}
