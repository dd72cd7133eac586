/**
 * "Deny with reason…" on Discord: the full bot through the contract, and the adapter's own part —
 * the modal that answers the click, what a submission hands the gateway, and how the submission is
 * answered (a deferred update, an ephemeral refusal, a deferral then a follow-up when slow).
 */
import { afterEach, describe, expect, it } from "vitest";
import { approvalButtons, type ApprovalCard } from "../../src/approval/card.ts";
import type { DiscordAdapterOptions } from "../../adapters/discord/index.ts";
import type { DiscordEmulatorOptions } from "../emulators/discord/index.ts";
import { runDenyWithReasonContract } from "../contract/deny-reason-contract.ts";
import { createDiscordHarness } from "./harness.ts";
import { withDiscordReasonForms } from "./reason-forms.ts";
import { startHarness, type Started } from "./setup.ts";

const REQUESTER = "300000000000000001";

runDenyWithReasonContract("discord", async () => withDiscordReasonForms(await createDiscordHarness()), {
  userId: "200000000000000001", strangerId: "200000000000000002",
});

let started: Started | undefined;
afterEach(async () => {
  await started?.h.close();
  started = undefined;
});

const card: ApprovalCard = {
  approvalId: "ap_Q7xk29LmZ",
  tool: "shell",
  argsSummary: "rm -rf build/",
  requester: { id: REQUESTER, name: "Alice" },
  approvers: ["the requester"],
  expiresAt: Date.now() + 10 * 60_000,
  buttons: approvalButtons("ap_Q7xk29LmZ"),
};

async function withModal(adapter: Partial<DiscordAdapterOptions> = {}, emulator: DiscordEmulatorOptions = {}) {
  started = await startHarness(adapter, emulator);
  const { h, sink } = started;
  const posted = await h.userSays("clean the build", { userId: REQUESTER });
  const [env] = await sink.waitForEnvelopes(1);
  const sent = await h.adapter.port.requestApproval!(env!.replyTo, card);
  const click = await h.emulator.click({ channelId: posted.threadId!, messageId: sent.id, customId: card.buttons.denyWithReason, userId: REQUESTER });
  await h.emulator.interactionSettled(click);
  const modal = h.emulator.openModals(REQUESTER)[0];
  if (!modal) throw new Error(`no modal: ${JSON.stringify(click.responses)}`);
  return { h, sink, click, modal, sentId: sent.id, threadId: posted.threadId! };
}

describe("Discord reason modal", () => {
  it("answers the click with a modal naming the tool, with one paragraph input of at most 500 characters", async () => {
    const { sink, click, modal } = await withModal();
    expect(click.responses).toEqual([expect.objectContaining({ kind: "callback", type: 9 })]);
    expect(modal.body).toMatchObject({
      custom_id: card.buttons.denyWithReason,
      title: "Deny with reason",
      components: [{ type: 1, components: [{ type: 4, custom_id: "reason", style: 2, label: "Why deny shell?", max_length: 500, required: true }] }],
    });
    expect(sink.clicks).toEqual([]);
  });

  it("hands the gateway a deny with the reason and the card it came from, acknowledged with a deferred update", async () => {
    const { h, sink, modal, sentId, threadId } = await withModal();
    const submitted = await h.emulator.submitModal(modal, { reason: "  not on a Friday  " });
    await h.emulator.interactionSettled(submitted);
    expect(submitted.responses.map((r) => [r.kind, r.type, r.ephemeral])).toEqual([["callback", 6, false]]);
    expect(submitted.responses[0]!.at - submitted.createdAt).toBeLessThan(3000);
    expect(sink.clicks).toEqual([
      {
        channel: "discord", approvalId: card.approvalId, choice: "deny", reason: "not on a Friday",
        actor: expect.objectContaining({ id: REQUESTER, isBot: false }), messageId: sentId, conversationId: threadId,
      },
    ]);
  });

  it("takes a reason of only spaces as a plain deny", async () => {
    const { h, sink, modal } = await withModal();
    await h.emulator.interactionSettled(await h.emulator.submitModal(modal, { reason: "   " }));
    expect(sink.clicks).toHaveLength(1);
    expect(sink.clicks[0]).toMatchObject({ choice: "deny" });
    expect(sink.clicks[0]!.reason).toBeUndefined();
  });

  it("answers a refused submission with an ephemeral reply only the submitter sees", async () => {
    const { h, sink, modal, threadId } = await withModal();
    sink.outcomes.push({ status: "not-allowed", message: "You may not approve this. Only Alice may decide." });
    const submitted = await h.emulator.submitModal(modal, { reason: "no" });
    await h.emulator.interactionSettled(submitted);
    expect(submitted.responses.map((r) => [r.kind, r.type, r.ephemeral, r.content])).toEqual([
      ["callback", 4, true, "You may not approve this. Only Alice may decide."],
    ]);
    expect(h.emulator.messages(threadId).some((m) => m.content.includes("may not approve"))).toBe(false);
  });

  it("defers a slow decision before Discord's deadline, then tells the submitter in a follow-up", async () => {
    const { h, sink, modal } = await withModal({ ackBudgetMs: 100 }, { ackDeadlineMs: 400 });
    sink.outcomes.push(() => new Promise((r) => setTimeout(() => r({ status: "already-decided", message: "Already decided by Bob (approved)." }), 700)));
    const submitted = await h.emulator.submitModal(modal, { reason: "late" });
    await h.emulator.interactionSettled(submitted, 2000, 900);
    expect(submitted.responses.map((r) => [r.kind, r.type, r.ephemeral, r.content])).toEqual([
      ["callback", 6, false, undefined],
      ["followup", undefined, true, "Already decided by Bob (approved)."],
    ]);
    expect(submitted.responses[0]!.at - submitted.createdAt).toBeLessThan(400);
  });
});
