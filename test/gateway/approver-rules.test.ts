import { afterEach, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import path from "node:path";
import { ApproverRuleSchema } from "../../src/policy/schema.ts";
import { eventually, startTestBot } from "../support/bot.ts";
import { MemoryChannel } from "../support/memory-channel.ts";
import { startOpenAIEmulator } from "../emulators/openai/index.ts";
import { callTools, routeModel } from "../support/scenario.ts";
import { startMemoryBot, type MemoryBot } from "./memory-bot.ts";

describe("approver rules with platform groups", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  async function start(rule: Record<string, unknown>, approvers: Record<string, string[]> = {}) {
    mb = await startMemoryBot({
      channel: { approverGroups: { S0SRE: ["u-sre"] }, chatAdmins: ["u-admin"] },
      configure: (config) => {
        config.approval.approvers = approvers;
        config.approval.rules = [ApproverRuleSchema.parse({ tools: ["write_file"], ...rule })];
      },
    });
    routeModel(mb.tb.model, [
      { when: "save a note", first: callTools({ name: "write_file", args: { path: "n.txt", content: "x" } }), then: { text: "Done with the note." } },
    ]);
    const env = await mb.channel.say("please save a note");
    const card = await eventually(() => mb!.channel.messages.find((m) => m.card), "the card");
    return { env, card: card.card!, file: path.join(mb.tb.bot.config.workspace!, "n.txt") };
  }

  it("lets a member of a named group approve, and refuses someone outside it", async () => {
    const { env, card, file } = await start({ approvers: { groups: ["S0SRE"] }, selfApprove: false });
    expect(card.approvers).toEqual(["group S0SRE"]);
    const outsider = await mb!.channel.click(card.approvalId, "approve", "u-bob");
    expect(outsider).toMatchObject({ status: "not-allowed", message: "You may not approve this. Only group S0SRE may decide." });
    expect(existsSync(file)).toBe(false);
    expect(await mb!.channel.click(card.approvalId, "approve", "u-sre")).toMatchObject({ status: "accepted" });
    await mb!.waitFor(env, "Done with the note.");
    expect(existsSync(file)).toBe(true);
  });

  it("lets the chat's admins approve under chatAdmins", async () => {
    const { env, card } = await start({ approvers: { chatAdmins: true }, selfApprove: false });
    expect((await mb!.channel.click(card.approvalId, "approve", "u-sre")).status).toBe("not-allowed");
    expect((await mb!.channel.click(card.approvalId, "approve", "u-admin")).status).toBe("accepted");
    await mb!.waitFor(env, "Done with the note.");
  });

  it("never lets a bot account approve, even one named as an approver", async () => {
    const { card, file } = await start({ approvers: { users: ["u-otherbot"] } });
    const outcome = await mb!.channel.click(card.approvalId, "approve", "u-otherbot", "otherbot", true);
    expect(outcome).toEqual({ status: "not-allowed", message: "Bot accounts cannot approve; nothing was changed." });
    const audit = await mb!.tb.bot.store.listAudit({ kind: "approval.click_refused" });
    expect(audit.map((e) => [e.actorId, e.outcome])).toEqual([["u-otherbot", "bot"]]);
    expect(mb!.channel.openCards()).toHaveLength(1);
    expect(existsSync(file)).toBe(false);
  });
});

describe("approver rules and a remembered Always", () => {
  let mb: MemoryBot | undefined;
  afterEach(async () => {
    await mb?.close();
    mb = undefined;
  });

  it("still asks the rule's approver for a call an earlier Always of the requester's did not cover", async () => {
    mb = await startMemoryBot({
      configure: (config) => {
        config.approval.approvers = { memory: ["u-admin"] };
        config.approval.rules = [ApproverRuleSchema.parse({
          name: "secrets need an admin", tools: ["write_file"], when: [{ arg: "path", glob: "secret/*" }],
          approvers: { users: ["u-admin"] }, selfApprove: false,
        })];
      },
    });
    routeModel(mb.tb.model, [
      { when: "save a note", first: callTools({ name: "write_file", args: { path: "n.txt", content: "x" } }), then: { text: "Done with the note." } },
      { when: "save the secret", first: callTools({ name: "write_file", args: { path: "secret/s.txt", content: "s" } }), then: { text: "Done with the secret." } },
      { when: "save another note", first: callTools({ name: "write_file", args: { path: "m.txt", content: "y" } }), then: { text: "Done with the other note." } },
    ]);
    const env = await mb.channel.say("please save a note");
    const first = await eventually(() => mb!.channel.messages.find((m) => m.card), "the first card");
    expect((await mb.channel.click(first.card!.approvalId, "always", "u-alice")).status).toBe("accepted");
    await mb.waitFor(env, "Done with the note.");

    const secret = path.join(mb.tb.bot.config.workspace!, "secret/s.txt");
    const env2 = await mb.channel.say("now save the secret", { threadId: env.replyTo.threadId });
    const second = await eventually(() => mb!.channel.openCards()[0], "a card for the secret");
    expect(second.card!.approvers).toEqual(["u-admin"]);
    expect(existsSync(secret)).toBe(false);
    expect((await mb.channel.click(second.card!.approvalId, "approve", "u-alice")).status).toBe("not-allowed");
    expect((await mb.channel.click(second.card!.approvalId, "approve", "u-admin")).status).toBe("accepted");
    await mb.waitFor(env2, "Done with the secret.");
    expect(existsSync(secret)).toBe(true);

    // The Always still covers the calls of the rule it was given under.
    const env3 = await mb.channel.say("and save another note", { threadId: env.replyTo.threadId });
    await mb.waitFor(env3, "Done with the other note.");
    expect(mb.channel.messages.filter((m) => m.card)).toHaveLength(2);
  });
});

describe("approver rules refused at start", () => {
  async function startWith(rule: Record<string, unknown>, channel = new MemoryChannel({ approverGroups: { S0SRE: ["u-sre"] } })) {
    const model = await startOpenAIEmulator();
    try {
      const tb = await startTestBot({ model, adapters: [channel], configure: (config) => void (config.approval.rules = [ApproverRuleSchema.parse(rule)]) });
      await tb.close();
      return undefined;
    } catch (err) {
      return err as Error;
    } finally {
      await model.close();
    }
  }

  it("refuses a rule for an unknown tool, naming the key and the likely fix", async () => {
    const err = await startWith({ tools: ["write_fil"], approvers: { users: ["u-ops"] } });
    expect(err?.name).toBe("ConfigError");
    expect(err?.message).toContain('approval.rules[0].tools: "write_fil" names no tool (did you mean "write_file"?)');
  });

  it("refuses a group the platform does not know, and the channel stops again", async () => {
    const channel = new MemoryChannel({ approverGroups: { S0SRE: ["u-sre"] } });
    const err = await startWith({ tools: ["write_file"], approvers: { groups: ["S0SRE", "S0NOPE"] } }, channel);
    expect(err?.name).toBe("ConfigError");
    expect(err?.message).toContain('approval.rules[0].approvers.groups: "S0NOPE" is not known on memory');
    expect(err?.message).not.toContain('"S0SRE"');
  });
});
