import { afterEach, describe, expect, it } from "vitest";
import { approvalButtons, type ApprovalCard } from "../../src/approval/card.ts";
import type { IngressEnvelope } from "../../src/envelope.ts";
import { createTelegramHarness, HARNESS_GROUP, type TelegramHarness } from "./harness.ts";
import { RecordingSink } from "./recording-sink.ts";

let h: TelegramHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const card = (approvalId = "Zx9_kLmN0pQrStUvWxYz0123456789Ab"): ApprovalCard => ({
  approvalId,
  tool: "shell",
  argsSummary: "rm -rf build && echo <done>",
  requester: { id: "4242", name: "Ada" },
  approvers: ["the requester", "admin 7"],
  expiresAt: Date.now() + 10 * 60_000,
  buttons: approvalButtons(approvalId),
});

async function setup(): Promise<{ h: TelegramHarness; sink: RecordingSink; env: IngressEnvelope }> {
  h = await createTelegramHarness();
  const sink = new RecordingSink();
  await h.adapter.start(sink);
  h.emulator.userMessage({ text: "clean the build", chat: HARNESS_GROUP, mentionBot: true, topicId: 5 });
  const [env] = await sink.waitForEnvelopes(1);
  return { h, sink, env: env! };
}

describe("telegram approval cards", () => {
  it("renders the card with Approve · Always · Deny · Deny with reason… carrying the card payloads within 64 bytes", async () => {
    const { h, env } = await setup();
    const c = card();
    const sent = await h.adapter.port.requestApproval!(env.replyTo, c);
    const [shown] = await h.botMessages(String(HARNESS_GROUP.id), "5");
    expect(shown!.id).toBe(sent.id);
    expect(shown!.buttons).toEqual([
      { label: "✅ Approve", payload: c.buttons.approve },
      { label: "♾️ Always", payload: c.buttons.always },
      { label: "⛔ Deny", payload: c.buttons.deny },
      { label: "📝 Deny with reason…", payload: c.buttons.denyWithReason },
    ]);
    for (const b of shown!.buttons) expect(Buffer.byteLength(b.payload)).toBeLessThanOrEqual(64);
    expect(shown!.text).toContain("shell");
    expect(shown!.text).toContain("rm -rf build && echo <done>");
    expect(shown!.text).toContain("May approve: the requester, admin 7");
    expect(shown!.text).toMatch(/Expires in 10 min/);
  });

  it("answers an accepted click without an alert and forwards it to the gateway", async () => {
    const { h, sink, env } = await setup();
    const c = card();
    await h.adapter.port.requestApproval!(env.replyTo, c);
    const [shown] = await h.botMessages(String(HARNESS_GROUP.id), "5");
    const started = Date.now();
    const result = await h.click(shown!, c.buttons.always, "7");
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toEqual({});
    expect(sink.clicks).toEqual([
      { channel: "telegram", approvalId: c.approvalId, choice: "always", actor: { id: "7", name: "User 7", isBot: false }, messageId: shown!.id, conversationId: String(HARNESS_GROUP.id) },
    ]);
    expect(h.emulator.callsOf("answerCallbackQuery")).toHaveLength(1);
  });

  it("shows a non-accepted outcome to the clicker only, as an alert", async () => {
    const { h, sink, env } = await setup();
    sink.outcome = { status: "not-allowed", message: "Only the requester or admin 7 may approve this." };
    const c = card();
    await h.adapter.port.requestApproval!(env.replyTo, c);
    const [shown] = await h.botMessages(String(HARNESS_GROUP.id), "5");
    const result = await h.click(shown!, c.buttons.approve, "99");
    expect(result.shownToClicker).toBe("Only the requester or admin 7 may approve this.");
    expect(h.emulator.callsOf("answerCallbackQuery")[0]!.params).toMatchObject({ show_alert: true });
    expect(h.emulator.callsOf("sendMessage")).toHaveLength(1);
  });

  it("refuses a forged payload without calling the gateway", async () => {
    const { h, sink, env } = await setup();
    await h.adapter.port.requestApproval!(env.replyTo, card());
    const [shown] = await h.botMessages(String(HARNESS_GROUP.id), "5");
    const result = await h.click(shown!, "gh1:../../etc:x", "7");
    expect(result.shownToClicker).toBe("This is not a valid button.");
    expect(sink.clicks).toHaveLength(0);
  });

  it("answers the click even when the gateway throws", async () => {
    const { h, sink, env } = await setup();
    sink.approvalClick = async () => {
      throw new Error("store is down");
    };
    const c = card();
    await h.adapter.port.requestApproval!(env.replyTo, c);
    const [shown] = await h.botMessages(String(HARNESS_GROUP.id), "5");
    const result = await h.click(shown!, c.buttons.deny, "7");
    expect(result.shownToClicker).toMatch(/could not be handled/);
  });

  it("resolving the card shows the decision and removes the buttons", async () => {
    const { h, env } = await setup();
    const c = card();
    const sent = await h.adapter.port.requestApproval!(env.replyTo, c);
    await h.adapter.port.resolveApproval!(env.replyTo, sent.id, c, { outcome: "denied", by: { id: "7", name: "Grace" }, text: "❌ Denied by Grace" });
    const [shown] = await h.botMessages(String(HARNESS_GROUP.id), "5");
    expect(shown!.buttons).toEqual([]);
    expect(shown!.text).toContain("❌ Denied by Grace");
    expect(shown!.text).toContain("shell");
  });

  it("a click during a slow turn of the same chat is not held behind it", async () => {
    const { h, sink, env } = await setup();
    const c = card();
    await h.adapter.port.requestApproval!(env.replyTo, c);
    sink.hold = () => new Promise(() => {});
    h.emulator.userMessage({ text: "another request", chat: HARNESS_GROUP, mentionBot: true, topicId: 5 });
    await sink.waitForEnvelopes(2);
    const [shown] = await h.botMessages(String(HARNESS_GROUP.id), "5");
    await expect(h.click(shown!, c.buttons.approve, "7")).resolves.toEqual({});
  });
});
