import { afterEach, describe, expect, it } from "vitest";
import { quietFor } from "../support/bot.ts";
import { lastUserText, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

describe("gateway dedupe", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  const asked = (bot: MemoryBot, words: string) => bot.tb.model.requests.filter((r) => lastUserText(r).includes(words)).length;

  it("answers a redelivered event once", async () => {
    mb = await startMemoryBot();
    routeModel(mb.tb.model, [{ when: "status report", first: { text: "All green." } }]);
    const env = await mb.channel.say("status report please");
    await mb.waitFor(env, "All green.");
    await mb.channel.redeliver(env);
    await mb.channel.redeliver(env);
    await quietFor(300);
    expect(mb.texts(env).filter((t) => t === "All green.")).toHaveLength(1);
    expect(asked(mb, "status report")).toBe(1);
  });

  it("answers a redelivered event once even after the bot restarted on the same data folder", async () => {
    mb = await startMemoryBot();
    routeModel(mb.tb.model, [{ when: "status report", first: { text: "All green." } }]);
    const env = await mb.channel.say("status report please");
    await mb.waitFor(env, "All green.");
    await mb.tb.restart();
    await mb.channel.redeliver(env);
    const fresh = await mb.channel.say("a new question after the restart");
    await mb.waitFor(fresh, "a new question after the restart");
    await quietFor(200);
    expect(mb.texts(env).filter((t) => t === "All green.")).toHaveLength(1);
    expect(asked(mb, "status report")).toBe(1);
  });
});
