import { afterEach, describe, expect, it } from "vitest";
import { callTools, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "../gateway/memory-bot.ts";

/** `model.stream`: whole replies for a server whose streaming is broken, the same turn either way. */
describe("model.stream", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  async function askTheTime(stream?: boolean): Promise<{ streamed: unknown[]; texts: string[] }> {
    mb = await startMemoryBot({ configure: (config) => void (stream !== undefined && (config.model.stream = stream)) });
    routeModel(mb.tb.model, [
      { when: "what time", first: callTools({ name: "current_time", args: { timezone: "UTC" } }), then: { text: "It is noon in UTC." } },
    ]);
    const env = await mb.channel.say("what time is it");
    await mb.waitFor(env, "It is noon in UTC.");
    await mb.waitFor(env, "✅ current_time");
    return { streamed: mb.tb.model.requests.map((r) => r.body.stream), texts: mb.texts(env) };
  }

  it("asks for whole replies when false; the tool runs and the answer lands as with streaming", async () => {
    const { streamed, texts } = await askTheTime(false);
    expect(streamed).toHaveLength(2);
    expect(streamed.every((s) => s !== true)).toBe(true);
    expect(texts.filter((t) => t === "It is noon in UTC.")).toHaveLength(1);
  });

  it("streams by default", async () => {
    const { streamed, texts } = await askTheTime();
    expect(streamed).toEqual([true, true]);
    expect(texts.filter((t) => t === "It is noon in UTC.")).toHaveLength(1);
  });
});
