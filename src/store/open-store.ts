/**
 * Picks the store for a deployment: PostgreSQL when a database URL is given (`DATABASE_URL`,
 * for several replicas sharing one workspace), else the embedded SQLite file in the data folder.
 * The composition root and the CLI open the store through here so that both agree.
 */
import { openSqliteStore } from "./sqlite-store.ts";
import type { Store } from "./store.ts";

/** What decides the store: the data folder always, a database URL when there is one. */
export interface OpenStoreOptions {
  /** The data folder; holds `gatehouse.db` when no database URL is given. */
  dataDir: string;
  /** A `postgres://` URL (DATABASE_URL); empty or absent means SQLite. */
  databaseUrl?: string;
  /** Clock for timestamps the interface does not pass in. Defaults to Date.now. */
  now?: () => number;
  /** PostgreSQL: told of a pooled connection that dropped (the message carries no password). */
  onConnectionError?: (err: Error) => void;
}

/** Which kind of store the options pick, e.g. for `gatehouse status`. */
export function storeKind(options: Pick<OpenStoreOptions, "databaseUrl">): "postgres" | "sqlite" {
  return options.databaseUrl?.trim() ? "postgres" : "sqlite";
}

/**
 * Opens (creating and migrating when needed) the store the options pick. Errors are the chosen
 * store's own: a StoreVersionError for a database written by a newer Gatehouse, otherwise a
 * message naming the file or the database host (never a password).
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const url = options.databaseUrl?.trim();
  const now = options.now ? { now: options.now } : {};
  if (url) {
    // Loaded only when asked for, so an embedded deployment never loads the PostgreSQL client.
    const { openPostgresStore } = await import("./postgres-store.ts");
    return openPostgresStore({ url, ...now, onConnectionError: options.onConnectionError });
  }
  return openSqliteStore({ dataDir: options.dataDir, ...now });
}
