/** Temporary data folders for store tests, removed after each test. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

const made: string[] = [];

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh, empty folder under the system temp dir; the returned data dir inside it does not exist yet. */
export function tempDataDir(): string {
  const root = mkdtempSync(join(tmpdir(), "gatehouse-store-"));
  made.push(root);
  return join(root, "data");
}
