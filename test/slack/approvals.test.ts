import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReplyTarget } from "../../src/envelope.ts";
import { approvalButtons, type ApprovalCard } from "../../src/approval/card.ts";
import { ALICE, GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";
import { RecordingSink, settle, until } from "./support.ts";

const card: ApprovalCard = {
  approvalId: "apv_123456",
  tool: "shell",
  argsSummary: "rm -rf ./build",
  requester: { id: ALICE, name: "alice" },
  approvers: [ALICE],
  expiresAt: Date.now() + 5 * 60_000,
  buttons: approvalButtons("apv_123456"),
};

describe("Slack approval cards", () => {
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

  it("renders the card in the thread with tool, arguments, approvers, expiry and four buttons", async () => {
    const sent = await h.adapter.port.requestApproval!(target, card);
    const [shown] = await h.botMessages(GENERAL, target.threadId);
    expect(shown!.id).toBe(sent.id);
    expect(shown!.text).toContain("shell");
    expect(shown!.text).toContain("rm -rf ./build");
    expect(shown!.text).toContain(`<@${ALICE}>`);
    expect(shown!.text).toMatch(/Expires in 5 min/);
    expect(shown!.buttons).toEqual([
      { label: "Approve", payload: card.buttons.approve },
      { label: "Always", payload: card.buttons.always },
      { label: "Deny", payload: card.buttons.deny },
      { label: "Deny with reason…", payload: card.buttons.denyWithReason },
    ]);
  });

  it("acknowledges a click in time and forwards it", async () => {
    const sent = await h.adapter.port.requestApproval!(target, card);
    const d = await h.emulator.click(GENERAL, sent.id, ALICE, card.buttons.approve);
    expect(d.timing.ms).toBeDefined();
    expect(d.timing.ms!).toBeLessThan(3000);
    const click = await until(() => sink.clicks[0]);
    expect(click).toEqual({
      channel: "slack", approvalId: card.approvalId, choice: "approve",
      actor: { id: ALICE, name: "alice", isBot: false }, messageId: sent.id, conversationId: GENERAL,
    });
    await settle();
    expect(h.emulator.world.ephemerals).toHaveLength(0);
  });

  it("acks before the sink answers, even when the sink is slow", async () => {
    sink.outcome = () => ({ status: "accepted", message: "" });
    const slow = sink.approvalClick.bind(sink);
    sink.approvalClick = async (c) => {
      await new Promise((r) => setTimeout(r, 3500));
      return slow(c);
    };
    const sent = await h.adapter.port.requestApproval!(target, card);
    const d = await h.emulator.click(GENERAL, sent.id, ALICE, card.buttons.deny);
    expect(d.timing.ms!).toBeLessThan(1000);
  });

  it("shows a click from someone who may not approve only to that person", async () => {
    sink.outcome = () => ({ status: "not-allowed", message: "You may not approve this." });
    const sent = await h.adapter.port.requestApproval!(target, card);
    const shown = await h.click((await h.botMessages(GENERAL, target.threadId))[0]!, card.buttons.approve, "U0BOB");
    expect(shown.shownToClicker).toBe("You may not approve this.");
    expect(h.emulator.world.ephemerals).toEqual([expect.objectContaining({ user: "U0BOB", channel: GENERAL, threadTs: target.threadId })]);
    expect(h.emulator.world.findMessage(GENERAL, sent.id)!.blocks).toBeDefined();
  });

  it("refuses a forged payload without telling the sink", async () => {
    const sent = await h.adapter.port.requestApproval!(target, card);
    await h.emulator.click(GENERAL, sent.id, ALICE, "gh1:../../etc:x", { actionId: "gatehouse_approval:approve:forged" });
    const eph = await until(() => h.emulator.world.ephemerals[0]);
    expect(eph.text).toBe("That is not a valid approval button.");
    expect(sink.clicks).toHaveLength(0);
  });

  it("answers a button without a value as not valid and keeps serving clicks", async () => {
    const sent = await h.adapter.port.requestApproval!(target, card);
    // A click whose action carries no value at all.
    await h.emulator.click(GENERAL, sent.id, ALICE, "", { actionId: "something_else" });
    await h.emulator.click(GENERAL, sent.id, ALICE, card.buttons.always);
    expect((await until(() => sink.clicks[0])).choice).toBe("always");
    expect(h.emulator.world.ephemerals.map((e) => e.text)).toEqual(["That is not a valid approval button."]);
  });

  it("resolves the card: shows who decided and removes the buttons", async () => {
    const sent = await h.adapter.port.requestApproval!(target, card);
    await h.adapter.port.resolveApproval!(target, sent.id, card, { outcome: "approved", by: { id: ALICE, name: "alice" }, text: "Approved by alice" });
    const [shown] = await h.botMessages(GENERAL, target.threadId);
    expect(shown!.buttons).toEqual([]);
    expect(shown!.text).toContain("Approved by alice");
    expect(shown!.text).toContain("shell");
  });
});
