import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { approvalButtons } from "../../src/approval/card.ts";
import { ALICE, GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";
import { RecordingSink, until } from "./support.ts";

describe("Slack contract harness", () => {
  let h: SlackHarness;
  let sink: RecordingSink;
  beforeEach(async () => {
    h = await createSlackHarness();
    sink = new RecordingSink();
    await h.adapter.start(sink);
  });
  afterEach(async () => {
    await h.close();
  });

  it("shows the bot's threaded reply to a user's post, as a person reads it", async () => {
    const posted = await h.userSays("hello");
    const env = await until(() => sink.envelopes[0]);
    await h.adapter.port.send(env.replyTo, { text: "a < b **ok**" });
    const seen = await h.botMessages(posted.conversationId, posted.threadId);
    expect(seen).toEqual([expect.objectContaining({ text: "a < b *ok*", buttons: [], conversationId: GENERAL, threadId: posted.threadId })]);
  });

  it("reports what only the clicker was shown, and nothing for an accepted click", async () => {
    await h.userSays("go");
    const env = await until(() => sink.envelopes[0]);
    const buttons = approvalButtons("apv_harness");
    const card = { approvalId: "apv_harness", tool: "shell", argsSummary: "ls", requester: { id: ALICE }, approvers: [ALICE], expiresAt: Date.now() + 60_000, buttons };
    const sent = await h.adapter.port.requestApproval!(env.replyTo, card);
    // Like the gateway: an accepted click resolves the card; anyone else is told why not.
    sink.outcome = (c) => {
      if (c.actor.id !== ALICE) return { status: "not-allowed", message: "Not yours to approve." };
      void h.adapter.port.resolveApproval!(env.replyTo, sent.id, card, { outcome: "approved", text: "Approved by alice" });
      return { status: "accepted", message: "" };
    };
    const [shown] = await h.botMessages(GENERAL, env.replyTo.threadId);
    expect(await h.click(shown!, buttons.approve, "U0BOB")).toEqual({ shownToClicker: "Not yours to approve." });
    const started = Date.now();
    expect(await h.click(shown!, buttons.approve, ALICE)).toEqual({});
    expect(Date.now() - started).toBeLessThan(1500);
    expect((await h.botMessages(GENERAL, env.replyTo.threadId))[0]!.buttons).toEqual([]);
  });

  it("resolves user mentions to names, asking Slack once per user", async () => {
    await h.userSays("ask <@U0BOB> and <@U0BOB>", { dm: true });
    await h.userSays("<@U0BOB> again", { dm: true });
    await until(() => sink.envelopes.length >= 2);
    expect(sink.envelopes.map((e) => e.text)).toEqual(["ask @bob and @bob", "@bob again"]);
    const lookups = h.emulator.world.calls.filter((c) => c.method === "users.info" && c.args.user === "U0BOB");
    expect(lookups).toHaveLength(1);
  });
});
