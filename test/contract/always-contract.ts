/**
 * The `/always` contract: remembered decisions listed and revoked in a thread with the platform's own
 * buttons, driving the FULL bot through a platform harness, as the people in that chat would.
 */
import { afterEach, describe, expect, it } from "vitest";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import { decodeButtonPayload } from "../../src/envelope.ts";
import type { Config } from "../../src/config/schema.ts";
import { eventually, quietFor, startTestBot, type TestBot } from "../support/bot.ts";
import { callTools, lastUserText, routeModel } from "../support/scenario.ts";
import type { ChannelHarness, PostedUserMessage, SeenMessage } from "./harness.ts";

/** Platform user ids the contract acts as. */
export interface AlwaysContractOptions {
  /** The person who talks to the bot. */
  userId: string;
  /** Someone else in the same chat. */
  strangerId: string;
}

const isRevoke = (payload: string) => decodeButtonPayload(payload)?.kind === "always";
const isCard = (m: SeenMessage) => m.buttons.some((b) => decodeApprovalPayload(b.payload) !== undefined);

/** Defines the `/always` suite for one channel. */
export function runAlwaysContract(name: string, makeHarness: () => Promise<ChannelHarness>, options: AlwaysContractOptions): void {
  describe(`/always contract: ${name}`, () => {
    let harness: ChannelHarness | undefined;
    let fixture: TestBot | undefined;
    const { userId, strangerId } = options;

    afterEach(async () => {
      await fixture?.close();
      await harness?.close();
      fixture = undefined;
      harness = undefined;
    });

    async function setup(configure?: (config: Config) => void): Promise<{ h: ChannelHarness; tb: TestBot }> {
      harness = await makeHarness();
      fixture = await startTestBot({
        adapters: [harness.adapter],
        configure: (config) => {
          config.approval.timeoutMs = 15_000;
          for (const channel of ["slack", "discord", "telegram"] as const) {
            config[channel].access = { ...config[channel].access, users: ["*"], conversations: ["*"] };
          }
          configure?.(config);
        },
      });
      routeModel(fixture.model, [
        { when: "save a note", first: callTools({ name: "write_file", args: { path: "notes/n.txt", content: "noted\n", append: true } }), then: { text: "Finished with the note." } },
      ]);
      return { h: harness, tb: fixture };
    }

    const inThread = (h: ChannelHarness, p: PostedUserMessage) => h.botMessages(p.conversationId, p.threadId);
    const found = (h: ChannelHarness, p: PostedUserMessage, what: string, pick: (m: SeenMessage) => boolean) =>
      eventually(async () => (await inThread(h, p)).find(pick), what, 10_000);
    const answers = async (h: ChannelHarness, p: PostedUserMessage, text: string) =>
      (await inThread(h, p)).filter((m) => m.text.includes(text)).length;

    it("lists an Always decision with a Revoke button; refuses someone else's revoke; the covered person's revoke shows on the list and the tool asks again", async () => {
      const { h, tb } = await setup();
      const posted = await h.userSays("please save a note", { userId });
      const card = await found(h, posted, "the approval card", isCard);
      const always = card.buttons.find((b) => decodeApprovalPayload(b.payload)?.choice === "always")!;
      await h.click(card, always.payload, userId);
      await found(h, posted, "the answer", (m) => m.text.includes("Finished with the note"));

      await h.userSays("/always", { userId, threadId: posted.threadId });
      const list = await found(h, posted, "the /always list with a Revoke button", (m) => m.buttons.some((b) => isRevoke(b.payload)));
      expect(list.text).toMatch(/Remembered "Always" decisions here \(1\)/);
      expect(list.text).toMatch(/1\. write_file for .+, in this (thread|chat) · given \d{4}-\d\d-\d\d \d\d:\d\d UTC · does not expire/);
      const revoke = list.buttons.find((b) => isRevoke(b.payload))!;
      expect(revoke.label).toContain("write_file");

      const refused = await h.click(list, revoke.payload, strangerId);
      expect(refused.shownToClicker).toMatch(/may revoke this decision; nothing changed/);
      await quietFor(300);
      expect((await inThread(h, posted)).find((m) => m.id === list.id)!.buttons).toHaveLength(1);
      expect(await tb.bot.store.listAlwaysRules()).toHaveLength(1);

      await h.click(list, revoke.payload, userId);
      const edited = await found(h, posted, "the list showing the revoke", (m) => m.id === list.id && /revoked by \S+/.test(m.text));
      expect(edited.buttons).toEqual([]);
      expect(edited.text).toContain("write_file");
      expect(await tb.bot.store.listAlwaysRules()).toEqual([]);

      const cardsBefore = (await inThread(h, posted)).filter(isCard).length;
      await h.userSays("please save a note", { userId, threadId: posted.threadId });
      await eventually(async () => (await inThread(h, posted)).filter(isCard).length > cardsBefore, "a new approval card", 10_000);
      expect(await answers(h, posted, "Finished with the note")).toBe(1);
      expect(tb.model.requests.filter((r) => lastUserText(r).includes("save a note")).length).toBeGreaterThanOrEqual(3);
    });

    it("lets an approver of the channel revoke someone else's decision", async () => {
      const { h, tb } = await setup((config) => {
        config.approval.approvers[harness!.adapter.channel] = [strangerId];
      });
      const posted = await h.userSays("please save a note", { userId });
      const card = await found(h, posted, "the approval card", isCard);
      await h.click(card, card.buttons.find((b) => decodeApprovalPayload(b.payload)?.choice === "always")!.payload, userId);
      await found(h, posted, "the answer", (m) => m.text.includes("Finished with the note"));
      await h.userSays("/always", { userId, threadId: posted.threadId });
      const list = await found(h, posted, "the /always list", (m) => m.buttons.some((b) => isRevoke(b.payload)));
      const shown = await h.click(list, list.buttons[0]!.payload, strangerId);
      expect(shown.shownToClicker).toBeUndefined();
      await found(h, posted, "the list showing the revoke", (m) => m.id === list.id && /revoked by/.test(m.text) && m.buttons.length === 0);
      expect(await tb.bot.store.listAlwaysRules()).toEqual([]);
    });

    it("says so when nothing is remembered, with no buttons", async () => {
      const { h } = await setup();
      const posted = await h.userSays("hello", { userId });
      await found(h, posted, "the answer", (m) => m.text.includes("answer to"));
      await h.userSays("/always", { userId, threadId: posted.threadId });
      const reply = await found(h, posted, "the /always answer", (m) => m.text.includes("Nothing is remembered here"));
      expect(reply.buttons).toEqual([]);
    });
  });
}
