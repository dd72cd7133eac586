/**
 * The approval governance contract: approver rules (a second person, a quorum, an approvers'
 * channel) through the FULL bot and a platform harness, as the people in the chat see it. Each
 * platform's governance test file calls `runGovernanceContract` with its harness.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import type { ApprovalChoice } from "../../src/envelope.ts";
import type { Config } from "../../src/config/schema.ts";
import { ApproverRuleSchema } from "../../src/policy/schema.ts";
import { startTestBot, eventually, quietFor, type TestBot } from "../support/bot.ts";
import { callTools, lastUserText, messagesOf, routeModel } from "../support/scenario.ts";
import type { ChannelHarness, PostedUserMessage, SeenMessage } from "./harness.ts";

export interface GovernanceOptions {
  channel: "slack" | "discord" | "telegram";
  /** The person who asks the bot. */
  requester: string;
  /** Two other people the rules name as approvers. */
  approverA: string;
  approverB: string;
  /** A conversation the bot may post in, used as the approvers' channel. */
  approversConversation: string;
  /**
   * Puts `userId` in a platform group (a Slack user group, a Discord role, Telegram chat admins)
   * before the bot starts; resolves with the rule's `approvers` naming that group.
   */
  grantGroup(harness: ChannelHarness, userId: string): Promise<Record<string, unknown>>;
  /** Makes the platform fail the next lookup of who is in a group (an outage, not a "no"). */
  failGroupCheck(harness: ChannelHarness): void;
}

export function runGovernanceContract(name: string, makeHarness: () => Promise<ChannelHarness>, o: GovernanceOptions): void {
  describe(`approval governance: ${name}`, () => {
    let harness: ChannelHarness | undefined;
    let fixture: TestBot | undefined;

    async function setup(
      ruleOf: Record<string, unknown> | ((h: ChannelHarness) => Promise<Record<string, unknown>>),
    ): Promise<{ h: ChannelHarness; tb: TestBot }> {
      harness = await makeHarness();
      const rule = typeof ruleOf === "function" ? await ruleOf(harness) : ruleOf;
      fixture = await startTestBot({
        adapters: [harness.adapter],
        configure: (config: Config) => {
          config.tools.profile = "full";
          config.approval.timeoutMs = 15_000;
          config.approval.rules = [ApproverRuleSchema.parse({ tools: ["write_file"], ...rule })];
          config[o.channel].access = { ...config[o.channel].access, users: ["*"], conversations: ["*"] };
        },
      });
      routeModel(fixture.model, [
        { when: "save a note", first: callTools({ name: "write_file", args: { path: "notes/n.txt", content: "noted\n", append: true } }), then: { text: "Finished with the note." } },
      ]);
      return { h: harness, tb: fixture };
    }

    afterEach(async () => {
      await fixture?.close();
      await harness?.close();
      fixture = undefined;
      harness = undefined;
    });

    const inThread = (h: ChannelHarness, p: PostedUserMessage) => h.botMessages(p.conversationId, p.threadId);
    const note = (tb: TestBot) => path.join(tb.bot.config.workspace!, "notes/n.txt");
    const toolResults = (tb: TestBot) =>
      tb.model.requests
        .filter((r) => lastUserText(r).includes("save a note"))
        .flatMap((r) => messagesOf(r).filter((m) => m.role === "tool").map((m) => String(m.content)));

    async function seenWith(h: ChannelHarness, conversationId: string, threadId: string | undefined, text: string | RegExp): Promise<SeenMessage[]> {
      return eventually(async () => {
        const all = await h.botMessages(conversationId, threadId);
        return all.some((m) => (typeof text === "string" ? m.text.includes(text) : text.test(m.text))) && all;
      }, `a bot message matching ${String(text)}`, 10_000);
    }

    async function cardIn(h: ChannelHarness, conversationId: string, threadId?: string): Promise<SeenMessage> {
      return eventually(async () => (await h.botMessages(conversationId, threadId)).find((m) => m.buttons.length > 0), "an approval card with buttons", 10_000);
    }

    const payloadFor = (card: SeenMessage, choice: ApprovalChoice) => {
      const button = card.buttons.find((b) => {
        const decoded = decodeApprovalPayload(b.payload);
        return decoded?.choice === choice && !decoded.askReason;
      });
      if (!button) throw new Error(`the card has no ${choice} button: ${JSON.stringify(card.buttons)}`);
      return button.payload;
    };

    it("does not let the requester approve their own call under selfApprove: false; another approver can", async () => {
      const { h, tb } = await setup({ approvers: { users: [o.approverA] }, selfApprove: false });
      const posted = await h.userSays("please save a note", { userId: o.requester });
      const card = await cardIn(h, posted.conversationId, posted.threadId);
      expect(card.text).toMatch(/may not approve it/);
      const own = await h.click(card, payloadFor(card, "approve"), o.requester);
      expect(own.shownToClicker).toMatch(/someone else must decide it/);
      await quietFor(300);
      expect(existsSync(note(tb))).toBe(false);
      await h.click(card, payloadFor(card, "approve"), o.approverA);
      await seenWith(h, posted.conversationId, posted.threadId, "Finished with the note");
      expect(readFileSync(note(tb), "utf8")).toBe("noted\n");
    });

    it("lets a member of the platform group the rule names approve, and refuses others", async () => {
      const { h, tb } = await setup(async (harness) => ({ approvers: await o.grantGroup(harness, o.approverA), selfApprove: false }));
      const posted = await h.userSays("please save a note", { userId: o.requester });
      const card = await cardIn(h, posted.conversationId, posted.threadId);
      const outsider = await h.click(card, payloadFor(card, "approve"), o.approverB);
      expect(outsider.shownToClicker).toMatch(/may not approve/);
      await quietFor(300);
      expect(existsSync(note(tb))).toBe(false);
      await h.click(card, payloadFor(card, "approve"), o.approverA);
      await seenWith(h, posted.conversationId, posted.threadId, "Finished with the note");
      expect(readFileSync(note(tb), "utf8")).toBe("noted\n");
    });

    it("tells a group member the platform could not vouch for to try again, and lets them approve when it answers", async () => {
      const { h, tb } = await setup(async (harness) => ({ approvers: await o.grantGroup(harness, o.approverA), selfApprove: false }));
      const posted = await h.userSays("please save a note", { userId: o.requester });
      const card = await cardIn(h, posted.conversationId, posted.threadId);
      o.failGroupCheck(h);
      const failed = await h.click(card, payloadFor(card, "approve"), o.approverA);
      expect(failed.shownToClicker).toMatch(/could not check whether you may approve this.*try again/);
      expect(failed.shownToClicker).not.toMatch(/may not approve/);
      await quietFor(300);
      expect(existsSync(note(tb))).toBe(false);
      await h.click(card, payloadFor(card, "approve"), o.approverA);
      await seenWith(h, posted.conversationId, posted.threadId, "Finished with the note");
      expect(readFileSync(note(tb), "utf8")).toBe("noted\n");
    });

    it("needs two different people for a two-person quorum, and counts nobody twice", async () => {
      const { h, tb } = await setup({ approvers: { users: [o.approverA, o.approverB] }, selfApprove: false, quorum: 2 });
      const posted = await h.userSays("please save a note", { userId: o.requester });
      const card = await cardIn(h, posted.conversationId, posted.threadId);
      expect(card.text).toMatch(/Needs 2 different people/);
      const first = await h.click(card, payloadFor(card, "approve"), o.approverA);
      expect(first.shownToClicker).toMatch(/counted \(1 of 2\)/);
      await seenWith(h, posted.conversationId, posted.threadId, /approved write\\?_file \(1 of 2\)/);
      const again = await h.click(card, payloadFor(card, "approve"), o.approverA);
      expect(again.shownToClicker).toMatch(/already approved/);
      await quietFor(300);
      expect(existsSync(note(tb))).toBe(false);
      await h.click(card, payloadFor(card, "approve"), o.approverB);
      await seenWith(h, posted.conversationId, posted.threadId, "Finished with the note");
      expect(readFileSync(note(tb), "utf8")).toBe("noted\n");
      const after = await eventually(async () => (await inThread(h, posted)).find((m) => m.id === card.id && m.buttons.length === 0), "the card without buttons");
      expect(after.text).toMatch(/Approved by .+ and .+/);
    });

    it("ends a quorum request at the first deny", async () => {
      const { h, tb } = await setup({ approvers: { users: [o.approverA, o.approverB] }, quorum: 2 });
      const posted = await h.userSays("please save a note", { userId: o.requester });
      const card = await cardIn(h, posted.conversationId, posted.threadId);
      await h.click(card, payloadFor(card, "approve"), o.approverA);
      await h.click(card, payloadFor(card, "deny"), o.approverB);
      await seenWith(h, posted.conversationId, posted.threadId, "Finished with the note");
      expect(existsSync(note(tb))).toBe(false);
      expect(toolResults(tb).join("\n")).toMatch(/denied by/);
    });

    it("routes the card to the approvers' channel, and shows the decision in both places", async () => {
      const { h, tb } = await setup({
        channels: [o.channel], approvers: { users: [o.approverA] }, selfApprove: false,
        routeTo: { conversation: o.approversConversation, label: "#ops-approvals" },
      });
      const posted = await h.userSays("please save a note", { userId: o.requester });
      const card = await cardIn(h, o.approversConversation);
      // Discord shows the raw Markdown, with the underscore escaped.
      expect(card.text).toMatch(/write\\?_file/);
      expect(card.text).toMatch(/Asked in\\?: \S*https?:/);
      await seenWith(h, posted.conversationId, posted.threadId, /write\\?_file waits for approval in #ops-approvals/);
      expect((await inThread(h, posted)).some((m) => m.buttons.length > 0)).toBe(false);
      await h.click(card, payloadFor(card, "approve"), o.approverA);
      const thread = await seenWith(h, posted.conversationId, posted.threadId, "Finished with the note");
      expect(thread.some((m) => /Approved by/.test(m.text))).toBe(true);
      expect(readFileSync(note(tb), "utf8")).toBe("noted\n");
      const resolved = await eventually(
        async () => (await h.botMessages(o.approversConversation)).find((m) => m.id === card.id && m.buttons.length === 0),
        "the routed card without buttons",
      );
      expect(resolved.text).toMatch(/Approved by/);
    });
  });
}
