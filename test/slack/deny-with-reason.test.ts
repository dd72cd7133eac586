/**
 * "Deny with reason…" on Slack: the full bot through the contract, and the adapter's own part —
 * the modal it opens with the click's trigger_id, what a submission hands the gateway, and how it
 * is acknowledged (closed, an error in the modal, or closed in time and told ephemerally).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReplyTarget } from "../../src/envelope.ts";
import { approvalButtons, type ApprovalCard } from "../../src/approval/card.ts";
import { runDenyWithReasonContract } from "../contract/deny-reason-contract.ts";
import { withPacing } from "../support/fast-pacing.ts";
import { ALICE, GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";
import { withSlackReasonForms } from "./reason-forms.ts";
import { RecordingSink, settle, until } from "./support.ts";

runDenyWithReasonContract("slack", async () => withPacing(withSlackReasonForms(await createSlackHarness()), 100), { userId: ALICE, strangerId: "U0BOB" });

const card: ApprovalCard = {
  approvalId: "apv_123456",
  tool: "shell",
  argsSummary: "rm -rf ./build",
  requester: { id: ALICE, name: "alice" },
  approvers: [ALICE],
  expiresAt: Date.now() + 5 * 60_000,
  buttons: approvalButtons("apv_123456"),
};

describe("Slack reason modal", () => {
  let h: SlackHarness;
  let sink: RecordingSink;
  let target: ReplyTarget;

  beforeEach(async () => {
    h = await createSlackHarness();
    sink = new RecordingSink();
    await h.adapter.start(sink);
    await h.userSays("clean the build");
    target = (await until(() => sink.envelopes[0])).replyTo;
  });
  afterEach(async () => {
    await h.close();
  });

  async function openModal(user = ALICE) {
    const sent = await h.adapter.port.requestApproval!(target, card);
    await h.emulator.click(GENERAL, sent.id, user, card.buttons.denyWithReason);
    const view = await h.emulator.world.waitFor(() => h.emulator.world.views.openFor(user)[0], 3000);
    if (!view) throw new Error("no modal opened");
    return { sent, view };
  }

  it("opens a modal naming the tool, with one multiline input of at most 500 characters, and decides nothing yet", async () => {
    const { view } = await openModal();
    expect(view.title).toBe("Deny with reason");
    expect(view.inputs).toEqual([expect.objectContaining({ label: "Why deny shell?", multiline: true, maxLength: 500, optional: false })]);
    const openCall = h.emulator.world.calls.find((c) => c.method === "views.open")!;
    expect(openCall.result).toBe("ok");
    await settle();
    expect(sink.clicks).toHaveLength(0);
  });

  it("hands the gateway a deny with the trimmed reason and the card it came from, and closes the modal", async () => {
    const { sent, view } = await openModal();
    const { delivery, view: after } = await h.emulator.submitView(view.id, { [view.inputs[0]!.actionId]: "  not on a Friday \n\n freeze  " });
    expect(delivery.timing.ms!).toBeLessThan(3000);
    expect(after.state).toBe("closed");
    expect(sink.clicks).toEqual([
      {
        channel: "slack", approvalId: card.approvalId, choice: "deny", reason: "not on a Friday\nfreeze",
        actor: { id: ALICE, name: "alice", isBot: false }, messageId: sent.id, conversationId: GENERAL,
      },
    ]);
  });

  it("shows a refusal inside the modal, which stays open", async () => {
    sink.outcome = () => ({ status: "not-allowed", message: "You may not approve this. Only alice may decide." });
    const { view } = await openModal("U0BOB");
    const { view: after } = await h.emulator.submitView(view.id, { [view.inputs[0]!.actionId]: "no" });
    expect(after.state).toBe("open");
    expect(Object.values(after.errors ?? {})).toEqual(["You may not approve this. Only alice may decide."]);
    expect(h.emulator.world.ephemerals).toHaveLength(0);
  });

  it("closes the modal within Slack's 3 s when the decision is slow, and tells the person ephemerally", async () => {
    sink.approvalClick = async (c) => {
      sink.clicks.push(c);
      await new Promise((r) => setTimeout(r, 2600));
      return { status: "already-decided", message: "Already decided by bob (approved)." };
    };
    const { view } = await openModal();
    const { delivery, view: after } = await h.emulator.submitView(view.id, { [view.inputs[0]!.actionId]: "too late" });
    expect(delivery.timing.ms!).toBeLessThan(3000);
    expect(after.state).toBe("closed");
    const told = await until(() => h.emulator.world.ephemerals[0], 3000);
    expect(told).toMatchObject({ user: ALICE, channel: GENERAL, threadTs: target.threadId, text: "Already decided by bob (approved)." });
  });

  it("tells the clicker when Slack refuses to open the modal, and decides nothing", async () => {
    h.emulator.failNext("views.open", { error: "expired_trigger_id" });
    const sent = await h.adapter.port.requestApproval!(target, card);
    await h.emulator.click(GENERAL, sent.id, ALICE, card.buttons.denyWithReason);
    const told = await until(() => h.emulator.world.ephemerals[0]);
    expect(told.text).toMatch(/reason form could not be opened/);
    expect(h.emulator.world.views.opened).toHaveLength(0);
    expect(sink.clicks).toHaveLength(0);
  });

  it("refuses a submission whose form was tampered with, in the modal", async () => {
    const { view } = await openModal();
    view.privateMetadata = "{not json";
    const { view: after } = await h.emulator.submitView(view.id, { [view.inputs[0]!.actionId]: "x" });
    expect(Object.values(after.errors ?? {})[0]).toMatch(/not valid any more/);
    expect(sink.clicks).toHaveLength(0);
  });
});
