/**
 * `waitUntil`: vi.waitFor with a timeout that suits a shared two-core machine (10 s unless told),
 * so that a busy CI run does not fail a test that only waited a second for a platform round trip.
 */
import { vi } from "vitest";

type WaitOptions = Parameters<typeof vi.waitFor>[1];

export function waitUntil<T>(check: () => T | Promise<T>, options?: WaitOptions): Promise<T> {
  const given = typeof options === "number" ? { timeout: options } : (options ?? {});
  return vi.waitFor(check, { timeout: 10_000, interval: 20, ...given });
}
