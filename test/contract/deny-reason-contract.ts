/**
 * The "Deny with reason…" contract: one suite every channel with a reason form passes, driving the
 * FULL bot (gateway, engine, approvals, store, delivery) through a platform harness as a person
 * would: the reason reaches the model in the denied call's result, the card (without buttons) and
 * the audit log; the plain Deny stays one click; a reason from someone who may not approve, or one
 * given after the decision, changes nothing and is answered.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import { startTestBot, eventually, quietFor, type TestBot } from "../support/bot.ts";
import { callTools, lastUserText, messagesOf, routeModel } from "../support/scenario.ts";
import type { RecordedRequest } from "../emulators/openai/index.ts";
import type { ChannelHarness, PostedUserMessage, SeenMessage } from "./harness.ts";

/** The form a platform shows after "Deny with reason…" (a modal, a forced-reply prompt). */
export interface ReasonForm {
  /** The person gives `reason` in the form; resolves with what they alone were shown (a refusal), if anything. */
  submit(reason: string): Promise<{ shownToClicker?: string }>;
}

/** A channel harness whose platform can ask a person for a reason. */
export interface ReasonHarness extends ChannelHarness {
  /** A person clicks `payload` ("Deny with reason…") on `card`; resolves once the platform shows them the form. */
  openReasonForm(card: SeenMessage, payload: string, userId: string): Promise<ReasonForm>;
  /** How many reason forms `userId` has been shown so far. */
  formsShown(userId: string): number;
}

export interface ReasonContractOptions {
  userId: string;
  /** Someone in the same chat who may not approve the first person's calls. */
  strangerId: string;
}

/** Defines the suite for one channel. */
export function runDenyWithReasonContract(name: string, makeHarness: () => Promise<ReasonHarness>, options: ReasonContractOptions): void {
  describe(`deny with reason: ${name}`, () => {
    let harness: ReasonHarness | undefined;
    let fixture: TestBot | undefined;
    const { userId, strangerId } = options;

    async function setup(): Promise<{ h: ReasonHarness; tb: TestBot }> {
      harness = await makeHarness();
      fixture = await startTestBot({
        adapters: [harness.adapter],
        configure: (config) => {
          // write_file asks a person (supervised, risk write).
          config.tools.profile = "full";
          config.approval.timeoutMs = 20_000;
          for (const channel of ["slack", "discord", "telegram"] as const) {
            config[channel].access = { ...config[channel].access, users: ["*"], conversations: ["*"] };
          }
        },
      });
      return { h: harness, tb: fixture };
    }

    afterEach(async () => {
      await fixture?.close();
      await harness?.close();
      fixture = undefined;
      harness = undefined;
    });

    // As a person reads it: Discord's backslash escapes are not shown.
    const inThread = async (h: ReasonHarness, p: PostedUserMessage) =>
      (await h.botMessages(p.conversationId, p.threadId)).map((m) => ({ ...m, text: m.text.replace(/\\([^\sA-Za-z0-9])/g, "$1") }));
    const requestsAbout = (tb: TestBot, words: string) => tb.model.requests.filter((r) => lastUserText(r).includes(words));
    const toolMessages = (r: RecordedRequest) => messagesOf(r).filter((m) => m.role === "tool").map((m) => String(m.content));
    const workspaceFile = (tb: TestBot, file: string) => path.join(tb.bot.config.workspace!, file);

    function routeSave(tb: TestBot, file: string) {
      routeModel(tb.model, [
        { when: "save a note", first: callTools({ name: "write_file", args: { path: file, content: "noted\n" } }), then: { text: "Finished with the note." } },
      ]);
    }

    async function cardIn(h: ReasonHarness, p: PostedUserMessage): Promise<SeenMessage> {
      return eventually(async () => (await inThread(h, p)).find((m) => m.buttons.length > 0), "an approval card with buttons", 8000);
    }

    async function decidedCard(h: ReasonHarness, p: PostedUserMessage, card: SeenMessage): Promise<SeenMessage> {
      return eventually(async () => (await inThread(h, p)).find((m) => m.id === card.id && m.buttons.length === 0), "the card without buttons");
    }

    const payloadOf = (card: SeenMessage, wanted: "approve" | "deny" | "reason") => {
      const button = card.buttons.find((b) => {
        const d = decodeApprovalPayload(b.payload);
        return wanted === "reason" ? d?.askReason === true : d?.choice === wanted && !d.askReason;
      });
      if (!button) throw new Error(`the card has no ${wanted} button: ${JSON.stringify(card.buttons)}`);
      return button.payload;
    };

    it("tells the model the reason in the denied call's result, shows it on the card without buttons, and audits it", async () => {
      const { h, tb } = await setup();
      routeSave(tb, "notes/denied.txt");
      const posted = await h.userSays("please save a note", { userId });
      const card = await cardIn(h, posted);
      const form = await h.openReasonForm(card, payloadOf(card, "reason"), userId);
      // Opening the form decides nothing.
      expect((await inThread(h, posted)).find((m) => m.id === card.id)!.buttons.length).toBeGreaterThan(0);
      const reason = "not on a Friday <@here> *deploy freeze*";
      expect(await form.submit(reason)).toEqual({});

      await eventually(async () => (await inThread(h, posted)).some((m) => m.text.includes("Finished with the note")), "the final answer");
      expect(existsSync(workspaceFile(tb, "notes/denied.txt"))).toBe(false);
      const results = toolMessages(requestsAbout(tb, "save a note").at(-1)!).join("\n");
      expect(results).toMatch(/write_file was not run: denied by .+: not on a Friday <@here> \*deploy freeze\*/);

      const after = await decidedCard(h, posted, card);
      expect(after.text).toMatch(/Denied by .+: write_file was not run\. Reason: /);
      expect(after.text).toContain("not on a Friday");
      const decided = await eventually(async () => (await tb.bot.store.listAudit({ kind: "approval.decided" }))[0], "the audit entry");
      expect(decided).toMatchObject({ outcome: "denied", tool: "write_file", reason });
      expect(h.formsShown(userId)).toBe(1);
    });

    it("keeps the plain Deny one click: no form, and no reason", async () => {
      const { h, tb } = await setup();
      routeSave(tb, "notes/plain.txt");
      const posted = await h.userSays("please save a note", { userId });
      const card = await cardIn(h, posted);
      expect(await h.click(card, payloadOf(card, "deny"), userId)).toEqual({});
      const after = await decidedCard(h, posted, card);
      expect(after.text).toMatch(/Denied by .+: write_file was not run\.$/m);
      expect(after.text).not.toContain("Reason:");
      await eventually(async () => (await inThread(h, posted)).some((m) => m.text.includes("Finished with the note")), "the final answer");
      expect(toolMessages(requestsAbout(tb, "save a note").at(-1)!).join("\n")).toMatch(/write_file was not run: denied by [^:\n]+\.$/m);
      expect(h.formsShown(userId)).toBe(0);
    });

    it("changes nothing when someone who may not approve gives a reason, and tells them", async () => {
      const { h, tb } = await setup();
      routeSave(tb, "notes/stranger.txt");
      const posted = await h.userSays("please save a note", { userId });
      const card = await cardIn(h, posted);
      const form = await h.openReasonForm(card, payloadOf(card, "reason"), strangerId);
      const shown = await form.submit("I do not like it");
      expect(shown.shownToClicker).toMatch(/You may not approve this/);
      await quietFor(300);
      expect(requestsAbout(tb, "save a note")).toHaveLength(1);
      expect((await inThread(h, posted)).find((m) => m.id === card.id)!.buttons.length).toBeGreaterThan(0);
      expect(await tb.bot.store.listAudit({ kind: "approval.decided" })).toEqual([]);
      // The person who may decide still can.
      await h.click(card, payloadOf(card, "approve"), userId);
      await eventually(async () => (await inThread(h, posted)).some((m) => m.text.includes("Finished with the note")), "the final answer");
      expect(readFileSync(workspaceFile(tb, "notes/stranger.txt"), "utf8")).toBe("noted\n");
    });

    it("answers a reason given after the decision with 'Already decided', and runs what was approved", async () => {
      const { h, tb } = await setup();
      routeSave(tb, "notes/late.txt");
      const posted = await h.userSays("please save a note", { userId });
      const card = await cardIn(h, posted);
      const form = await h.openReasonForm(card, payloadOf(card, "reason"), userId);
      await h.click(card, payloadOf(card, "approve"), userId);
      await decidedCard(h, posted, card);
      const shown = await form.submit("changed my mind");
      expect(shown.shownToClicker).toMatch(/Already decided by .+ \(approved\)/);
      await eventually(async () => (await inThread(h, posted)).some((m) => m.text.includes("Finished with the note")), "the final answer");
      expect(readFileSync(workspaceFile(tb, "notes/late.txt"), "utf8")).toBe("noted\n");
      const decided = await tb.bot.store.listAudit({ kind: "approval.decided" });
      expect(decided.map((e) => e.outcome)).toEqual(["approved"]);
    });
  });
}
