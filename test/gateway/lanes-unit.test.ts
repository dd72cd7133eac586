import { describe, expect, it } from "vitest";
import { SessionLanes } from "../../src/gateway/lanes.ts";

describe("session lanes", () => {
  it("count a session as busy while its turn waits for a free slot among all turns", async () => {
    const lanes = new SessionLanes({ maxConcurrentTurns: 1, maxQueuedPerSession: 5 });
    let releaseA: () => void = () => {};
    const a = new Promise<void>((r) => (releaseA = r));
    lanes.enqueue("a", () => a);
    lanes.enqueue("b", async () => {});
    await new Promise((r) => setTimeout(r, 10));
    expect(lanes.busy("a")).toBe(true);
    expect(lanes.busy("b")).toBe(true);
    expect(lanes.busy("c")).toBe(false);
    releaseA();
    await lanes.idle();
    expect(lanes.busy("b")).toBe(false);
  });
});
