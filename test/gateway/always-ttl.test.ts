import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../support/bot.ts";
import { callTools, routeModel } from "../support/scenario.ts";
import { MEMORY_USER } from "../support/memory-channel.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

describe("remembered decisions with approval.alwaysTtl", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  async function start(ttl: string): Promise<MemoryBot> {
    mb = await startMemoryBot({ configure: (config) => void (config.approval.alwaysTtl = ttl) });
    routeModel(mb.tb.model, [
      { when: "save a note", first: callTools({ name: "write_file", args: { path: "n.txt", content: "x\n", append: true } }), then: { text: "Saved the note." } },
    ]);
    return mb;
  }

  const cards = (bot: MemoryBot) => bot.channel.messages.filter((m) => m.card);

  /** Asks for a note, answers its card with Always, and waits for the answer; returns the first message. */
  async function alwaysForNotes(bot: MemoryBot) {
    const env = await bot.channel.say("please save a note", { userName: "Ann" });
    const card = await eventually(() => cards(bot)[0], "the card");
    expect((await bot.channel.click(card.card!.approvalId, "always", MEMORY_USER, "Ann")).status).toBe("accepted");
    await bot.waitFor(env, "Saved the note.");
    return { env, card };
  }

  it("says on the card how long the Always holds, applies it meanwhile, and /always shows when it expires", async () => {
    const bot = await start("7d");
    const { env, card } = await alwaysForNotes(bot);
    await eventually(() => card.resolution, "the card's resolution");
    expect(card.resolution!.text).toMatch(/will not ask Ann again here for 7 d\.$/);

    await bot.channel.say("please save a note again", { threadId: env.conversation.threadId, userName: "Ann" });
    await eventually(() => bot.texts(env).filter((t) => t === "Saved the note.").length === 2, "the second answer");
    expect(cards(bot)).toHaveLength(1);

    await bot.channel.say("/always", { threadId: env.conversation.threadId, userName: "Ann" });
    const list = await bot.waitFor(env, "Remembered");
    expect(list.text).toMatch(/1\. write_file for Ann, in this thread · given .+ · expires \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in 7 d\)/);
  });

  it("stops applying an expired Always: the next call asks again, and /always no longer lists it", async () => {
    const bot = await start("1s");
    const { env } = await alwaysForNotes(bot);
    const [rule] = await bot.tb.bot.store.listAlwaysRules();
    expect(rule!.expiresAt! - rule!.createdAt).toBe(1000);
    await eventually(() => Date.now() > rule!.expiresAt! + 20, "the decision to expire");

    await bot.channel.say("please save a note again", { threadId: env.conversation.threadId, userName: "Ann" });
    await eventually(() => cards(bot).length === 2, "a second card");
    await bot.channel.say("/always", { threadId: env.conversation.threadId, userName: "Ann" });
    await bot.waitFor(env, "Nothing is remembered here");
    expect(bot.texts(env).some((t) => t.startsWith("Remembered"))).toBe(false);
  });

  it("refuses a TTL that is not a span, naming the key", async () => {
    const { ApprovalConfigSchema } = await import("../../src/policy/schema.ts");
    const bad = ApprovalConfigSchema.safeParse({ alwaysTtl: "a week" });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.path).toEqual(["alwaysTtl"]);
    expect(ApprovalConfigSchema.safeParse({ alwaysTtl: "0d" }).success).toBe(false);
    expect(ApprovalConfigSchema.parse({ alwaysTtl: "12h" }).alwaysTtl).toBe("12h");
  });
});
