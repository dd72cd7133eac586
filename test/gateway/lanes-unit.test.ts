import { describe, expect, it } from "vitest";
import { SessionLanes } from "../../src/gateway/lanes.ts";

describe("session lanes", () => {
  it("count a session as busy while its turn waits for a free slot among all turns", async () => {
    const lanes = new SessionLanes({ maxConcurrentTurns: 1, maxQueuedPerSession: 5 });
    let releaseA: () => void = () => {};
    const a = new Promise<void>((r) => (releaseA = r));
    lanes.enqueue("a", () => lanes.compute(() => a));
    lanes.enqueue("b", () => lanes.compute(async () => {}));
    await new Promise((r) => setTimeout(r, 10));
    expect(lanes.busy("a")).toBe(true);
    expect(lanes.busy("b")).toBe(true);
    expect(lanes.busy("c")).toBe(false);
    releaseA();
    await lanes.idle();
    expect(lanes.busy("b")).toBe(false);
  });

  it("lets a turn that waits without computing hold its lane but no slot", async () => {
    const lanes = new SessionLanes({ maxConcurrentTurns: 1, maxQueuedPerSession: 5 });
    let releaseA: () => void = () => {};
    const parked = new Promise<void>((r) => (releaseA = r));
    const order: string[] = [];
    lanes.enqueue("a", async () => {
      await lanes.compute(async () => order.push("a computes"));
      await parked;
      order.push("a resumed");
    });
    lanes.enqueue("a", async () => void order.push("a's next message"));
    let bDone: () => void = () => {};
    const b = new Promise<void>((r) => (bDone = r));
    lanes.enqueue("b", () => lanes.compute(async () => void order.push("b computes")).then(bDone));
    await b;
    expect(order).toEqual(["a computes", "b computes"]);
    expect(lanes.busy("a")).toBe(true);
    releaseA();
    await lanes.idle();
    expect(order).toEqual(["a computes", "b computes", "a resumed", "a's next message"]);
    expect(lanes.laneCount).toBe(0);
  });
});
