/**
 * One PostgreSQL server per test file, started by the first test that needs it and stopped after
 * the last, with a fresh database for every store location. A server that cannot start fails
 * every test that needs it with the reason (started inside the tests, not in a beforeAll, so
 * that they are reported failed rather than skipped).
 */
import { afterAll } from "vitest";
import { openPostgresStore } from "../../src/store/postgres-store.ts";
import { startPostgres, type PostgresServer } from "../support/postgres.ts";
import type { StoreHarness } from "./contract/index.ts";

/** The file's server and a harness that opens stores on fresh databases. */
export function usePostgresServer(): {
  server(): Promise<PostgresServer>;
  freshDatabase(): Promise<string>;
  harness: StoreHarness;
} {
  let starting: Promise<PostgresServer> | undefined;
  const server = (): Promise<PostgresServer> => (starting ??= startPostgres());
  afterAll(async () => {
    const running = await starting?.catch(() => undefined);
    await running?.stop();
  });
  const freshDatabase = async (): Promise<string> => (await server()).createDatabase();
  return {
    server,
    freshDatabase,
    harness: {
      freshLocation: freshDatabase,
      open: (url, options) => openPostgresStore({ url, ...options }),
    },
  };
}
