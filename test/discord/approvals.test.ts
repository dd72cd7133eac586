import { afterEach, describe, expect, it } from "vitest";
import { approvalButtons, type ApprovalCard } from "../../src/approval/card.ts";
import type { ReplyTarget } from "../../src/envelope.ts";
import type { SeenMessage } from "../contract/harness.ts";
import { startHarness, type Started } from "./setup.ts";
import type { DiscordAdapterOptions } from "../../adapters/discord/index.ts";
import type { DiscordEmulatorOptions } from "../emulators/discord/index.ts";

let started: Started | undefined;
afterEach(async () => {
  await started?.h.close();
  started = undefined;
});

const REQUESTER = "300000000000000001";
const STRANGER = "300000000000000002";

function card(): ApprovalCard {
  return {
    approvalId: "ap_Q7xk29LmZ",
    tool: "shell",
    argsSummary: "rm -rf build/",
    requester: { id: REQUESTER, name: "Alice" },
    approvers: ["the requester"],
    expiresAt: Date.now() + 10 * 60_000,
    buttons: approvalButtons("ap_Q7xk29LmZ"),
  };
}

async function withCard(adapter: Partial<DiscordAdapterOptions> = {}, emulator: DiscordEmulatorOptions = {}) {
  started = await startHarness(adapter, emulator);
  const { h, sink } = started;
  const posted = await h.userSays("clean the build", { userId: REQUESTER });
  const [env] = await sink.waitForEnvelopes(1);
  const sent = await h.adapter.port.requestApproval!(env!.replyTo, card());
  const [seen] = await h.botMessages(posted.conversationId, posted.threadId);
  return { h, sink, target: env!.replyTo as ReplyTarget, seen: seen!, sentId: sent.id, posted };
}

describe("Discord approval cards", () => {
  it("renders the tool, arguments, approvers and expiry with Approve · Always · Deny · Deny with reason… carrying the card's payloads", async () => {
    const { seen, sentId } = await withCard();
    expect(seen.id).toBe(sentId);
    expect(seen.text).toContain("shell");
    expect(seen.text).toContain("rm -rf build/");
    expect(seen.text).toContain("the requester");
    expect(seen.text).toMatch(/expires <t:\d+:R>/);
    expect(seen.buttons).toEqual([
      { label: "Approve", payload: card().buttons.approve },
      { label: "Always", payload: card().buttons.always },
      { label: "Deny", payload: card().buttons.deny },
      { label: "Deny with reason…", payload: card().buttons.denyWithReason },
    ]);
  });

  it("acknowledges a click in time and forwards it, showing nothing extra to the clicker", async () => {
    const { h, sink, seen, posted } = await withCard();
    const shown = await h.click(seen, card().buttons.approve, REQUESTER);
    expect(shown.shownToClicker).toBeUndefined();
    expect(sink.clicks).toEqual([
      { channel: "discord", approvalId: "ap_Q7xk29LmZ", choice: "approve", actor: expect.objectContaining({ id: REQUESTER, isBot: false }), messageId: seen.id, conversationId: posted.threadId },
    ]);
    const interaction = [...h.emulator.state.interactions.values()][0]!;
    expect(interaction.responses[0]).toMatchObject({ kind: "callback", type: 6 });
    expect(interaction.responses[0]!.at - interaction.createdAt).toBeLessThan(3000);
  });

  it("tells only the clicker when they may not approve, and leaves the card as it was", async () => {
    const { h, sink, seen, posted } = await withCard();
    sink.outcomes.push({ status: "not-allowed", message: "Only Alice can approve this." });
    const shown = await h.click(seen, card().buttons.approve, STRANGER);
    expect(shown.shownToClicker).toBe("Only Alice can approve this.");
    const [after] = await h.botMessages(posted.conversationId, posted.threadId);
    expect(after).toEqual(seen);
    expect(h.emulator.messages(posted.threadId!).some((m) => m.content.includes("Only Alice"))).toBe(false);
  });

  it("answers a double click with the already-decided message", async () => {
    const { h, sink, seen } = await withCard();
    sink.outcomes.push({ status: "accepted", message: "Approved." }, { status: "already-decided", message: "Already approved by Alice." });
    const [first, second] = await Promise.all([h.click(seen, card().buttons.approve, REQUESTER), h.click(seen, card().buttons.approve, REQUESTER)]);
    expect([first.shownToClicker, second.shownToClicker].sort()).toEqual(["Already approved by Alice.", undefined]);
    expect(sink.clicks).toHaveLength(2);
  });

  it("refuses a forged button payload without asking the approval service", async () => {
    const { h, sink, seen } = await withCard();
    const shown = await h.click(seen, "gh1:../../etc:x", STRANGER);
    expect(shown.shownToClicker).toBe("That is not a valid button.");
    expect(sink.clicks).toEqual([]);
  });

  it("defers a click before Discord's deadline when the decision is slow, then tells the clicker", async () => {
    const { h, sink, seen } = await withCard({ ackBudgetMs: 100 }, { ackDeadlineMs: 400 });
    sink.outcomes.push(() => new Promise((r) => setTimeout(() => r({ status: "expired", message: "This approval has expired." }), 700)));
    const interaction = await h.emulator.click({ channelId: seen.threadId!, messageId: seen.id, customId: card().buttons.deny, userId: REQUESTER });
    await h.emulator.interactionSettled(interaction, 2000, 900);
    expect(interaction.responses.map((r) => [r.kind, r.ephemeral, r.content])).toEqual([
      ["callback", false, undefined],
      ["followup", true, "This approval has expired."],
    ]);
    expect(interaction.responses[0]!.at - interaction.createdAt).toBeLessThan(400);
  });

  it("shows the decision on the card and removes the buttons", async () => {
    const { h, target, seen, posted } = await withCard();
    await h.adapter.port.resolveApproval!(target, seen.id, card(), { outcome: "approved", by: { id: REQUESTER, name: "Alice" }, text: "✅ Approved by Alice" });
    const [after] = await h.botMessages(posted.conversationId, posted.threadId);
    expect(after!.buttons).toEqual([]);
    expect(after!.text).toContain("✅ Approved by Alice");
    expect(after!.text).toContain("shell");
  });
});
