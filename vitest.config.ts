import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    // CI machines are shared: one retry keeps a run from failing on a test that lost a race with
    // another process; a test that fails twice still fails the run.
    retry: process.env.CI ? 1 : 0,
    hookTimeout: 20_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
