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

  it("gives a turn's slot up while its work waits for a person, and takes one again before it goes on", async () => {
    const lanes = new SessionLanes({ maxConcurrentTurns: 1, maxQueuedPerSession: 5 });
    const order: string[] = [];
    let answer: (v: string) => void = () => {};
    const person = new Promise<string>((r) => (answer = r));
    let bHolds: () => void = () => {};
    const bGoesOn = new Promise<void>((r) => (bHolds = r));
    let bStarted: () => void = () => {};
    const bIn = new Promise<void>((r) => (bStarted = r));
    lanes.enqueue("a", () =>
      lanes.compute(async (away) => {
        order.push("a asks");
        order.push(`a got ${await away(() => person)}`);
        order.push("a goes on");
      }),
    );
    await new Promise((r) => setTimeout(r, 10));
    lanes.enqueue("b", () =>
      lanes.compute(async () => {
        order.push("b computes");
        bStarted();
        await bGoesOn;
        order.push("b done");
      }),
    );
    await bIn;
    expect(order).toEqual(["a asks", "b computes"]);
    // The person answers while b holds the only slot: a waits for it.
    answer("yes");
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual(["a asks", "b computes"]);
    bHolds();
    await lanes.idle();
    expect(order).toEqual(["a asks", "b computes", "b done", "a got yes", "a goes on"]);
    expect(lanes.runningCount).toBe(0);
  });

  it("shares the slot among parallel waits of one turn: given up once, taken again when the last wait ends", async () => {
    const lanes = new SessionLanes({ maxConcurrentTurns: 1, maxQueuedPerSession: 5 });
    const answers: Array<() => void> = [];
    const wait = () => new Promise<void>((r) => answers.push(r));
    let otherRan = false;
    const a = lanes.compute(async (away) => {
      await Promise.all([away(wait), away(wait)]);
    });
    await new Promise((r) => setTimeout(r, 10));
    await lanes.compute(async () => void (otherRan = true));
    expect(otherRan).toBe(true);
    answers[0]!();
    answers[1]!();
    await a;
    // Every slot was given back: the next work starts at once.
    let next = false;
    await lanes.compute(async () => void (next = true));
    expect(next).toBe(true);
  });

  it("takes no slot for a wait that outlives its work", async () => {
    const lanes = new SessionLanes({ maxConcurrentTurns: 1, maxQueuedPerSession: 5 });
    let answer: () => void = () => {};
    const person = new Promise<void>((r) => (answer = r));
    let left: Promise<void> | undefined;
    await lanes.compute(async (away) => {
      left = away(() => person);
      // The work ends without waiting for the answer (as a batch whose other call failed).
    });
    answer();
    await left;
    let next = false;
    await lanes.compute(async () => void (next = true));
    expect(next).toBe(true);
  });
});
