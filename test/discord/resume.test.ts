import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type Started } from "./setup.ts";

let started: Started | undefined;
afterEach(async () => {
  await started?.h.close();
  started = undefined;
});

describe("Discord gateway connection", () => {
  it("resumes after a dropped connection without losing or repeating a message", async () => {
    started = await startHarness();
    const { h, sink } = started;
    await h.userSays("before the drop", { userId: "300000000000000001" });
    await sink.waitForEnvelopes(1);

    h.emulator.dropGateway();
    // Posted while the bot is disconnected: Discord keeps it for the session and replays it on RESUME.
    await h.userSays("while disconnected", { userId: "300000000000000001" });
    await h.userSays("after the resume", { userId: "300000000000000001" });

    const envelopes = await sink.waitForEnvelopes(3, 5000);
    await new Promise((r) => setTimeout(r, 50));
    expect(envelopes.map((e) => e.text)).toEqual(["before the drop", "while disconnected", "after the resume"]);
    expect(h.emulator.gateway.handshakes.map((x) => x.op)).toEqual(["identify", "resume"]);
  });
});
