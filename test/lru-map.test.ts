import { describe, expect, it } from "vitest";
import { LruMap } from "../src/lru-map.ts";

describe("LruMap", () => {
  it("never holds more than its bound, however many keys pass through", () => {
    const map = new LruMap<string, number>({ max: 100 });
    for (let i = 0; i < 10_000; i++) map.set(`session-${i}`, i);
    expect(map.size).toBe(100);
    expect(map.get("session-9999")).toBe(9999);
    expect(map.get("session-0")).toBeUndefined();
  });

  it("forgets the least recently used entry first, so a key in use stays", () => {
    const map = new LruMap<string, number>({ max: 3 });
    map.set("a", 1).set("b", 2).set("c", 3);
    expect(map.get("a")).toBe(1);
    map.set("d", 4);
    expect(map.has("b")).toBe(false);
    expect([map.has("a"), map.has("c"), map.has("d")]).toEqual([true, true, true]);
  });

  it("reads an entry older than its time to live as absent, and drops it", () => {
    let now = 0;
    const map = new LruMap<string, string>({ max: 10, ttlMs: 1000, now: () => now });
    map.set("u1", "alice");
    now = 999;
    expect(map.get("u1")).toBe("alice");
    now = 1000;
    expect(map.has("u1")).toBe(false);
    expect(map.size).toBe(0);
  });

  it("refuses a bound below one", () => {
    expect(() => new LruMap({ max: 0 })).toThrow(/max >= 1/);
  });
});
