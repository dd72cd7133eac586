/** Contract: inbound dedupe (markSeen). */
import { describe, expect, it } from "vitest";
import { openFresh, type StoreHarness } from "./harness.ts";

const TTL = 10 * 60_000;

/** Dedupe behaviours every store must have. */
export function describeDedupeContract(harness: StoreHarness): void {
  describe("inbound dedupe (markSeen)", () => {
    it("handles an event the first time, skips redeliveries within the TTL, and handles it again after expiry", async () => {
      const store = await openFresh(harness);
      expect(await store.markSeen("slack", "Ev1", TTL, 0)).toBe(true);
      expect(await store.markSeen("slack", "Ev1", TTL, 1_000)).toBe(false);
      expect(await store.markSeen("slack", "Ev1", TTL, TTL - 1)).toBe(false);
      expect(await store.markSeen("slack", "Ev1", TTL, TTL)).toBe(true);
      expect(await store.markSeen("slack", "Ev1", TTL, TTL + 1)).toBe(false);
      await store.close();
    });

    it("does not extend the TTL when a redelivery is skipped", async () => {
      const store = await openFresh(harness);
      await store.markSeen("telegram", "42", 1_000, 0);
      expect(await store.markSeen("telegram", "42", 1_000, 900)).toBe(false);
      expect(await store.markSeen("telegram", "42", 1_000, 1_000)).toBe(true);
      await store.close();
    });

    it("treats the same event id on different channels as different events", async () => {
      const store = await openFresh(harness);
      expect(await store.markSeen("discord", "123", TTL, 0)).toBe(true);
      expect(await store.markSeen("telegram", "123", TTL, 0)).toBe(true);
      await store.close();
    });

    it("handles exactly one of simultaneous deliveries of one event", async () => {
      const store = await openFresh(harness);
      const results = await Promise.all(Array.from({ length: 10 }, () => store.markSeen("slack", "Ev-burst", TTL, 1_000)));
      expect(results.filter(Boolean)).toHaveLength(1);
      await store.close();
    });

    it("still skips a redelivery after a restart", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      expect(await before.markSeen("telegram", "update-7", TTL, 1_700_000_000_000)).toBe(true);
      await before.close();

      const after = await harness.open(location);
      expect(await after.markSeen("telegram", "update-7", TTL, 1_700_000_001_000)).toBe(false);
      expect(await after.markSeen("telegram", "update-7", TTL, 1_700_000_000_000 + TTL)).toBe(true);
      await after.close();
    });
  });
}
