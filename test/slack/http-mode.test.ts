import { describe, expect, it } from "vitest";
import { approvalButtons } from "../../src/approval/card.ts";
import { useHttpModeAdapter } from "./http-setup.ts";
import { ALICE, GENERAL } from "./harness.ts";
import { settle, until } from "./support.ts";


describe("Slack HTTP Events API mode", () => {
  const http = useHttpModeAdapter();

  it("accepts a correctly signed mention and answers within the deadline", async () => {
    const { message, deliveries } = await http.emu.userPosts({ user: ALICE, channel: GENERAL, text: `<@${http.emu.botUserId}> hi` });
    for (const d of deliveries) {
      expect(d.status).toBe(200);
      expect(d.timing.ms!).toBeLessThan(3000);
    }
    const env = await until(() => http.sink.envelopes[0]);
    expect(env).toMatchObject({ id: `${GENERAL}:${message.ts}`, text: "hi", mentioned: true });
  });

  it("rejects an event with a bad signature", async () => {
    const { deliveries } = await http.emu.userPosts({ user: ALICE, channel: GENERAL, text: `<@${http.emu.botUserId}> hi` }, { wrongSecret: "not-the-secret" });
    expect(deliveries.map((d) => d.status)).toEqual([401, 401]);
    await settle();
    expect(http.sink.envelopes).toHaveLength(0);
  });

  it("rejects a replayed request with a stale timestamp", async () => {
    const { deliveries } = await http.emu.userPosts({ user: ALICE, channel: `D${ALICE}`, text: "hi" }, { timestampSkewSec: -600 });
    expect(deliveries.map((d) => d.status)).toEqual([401]);
  });

  it("gives a retried delivery (X-Slack-Retry-Num) the same id", async () => {
    await http.emu.userPosts({ user: ALICE, channel: `D${ALICE}`, text: "hi" });
    await until(() => http.sink.envelopes[0]);
    const [again] = await http.emu.redeliverLast();
    expect(again!.status).toBe(200);
    await until(() => http.sink.envelopes[1]);
    expect(http.sink.envelopes[1]!.id).toBe(http.sink.envelopes[0]!.id);
  });

  it("acks and forwards an approval click posted as a signed form", async () => {
    await http.emu.userPosts({ user: ALICE, channel: GENERAL, text: `<@${http.emu.botUserId}> go` });
    const target = (await until(() => http.sink.envelopes[0])).replyTo;
    const buttons = approvalButtons("apv_abcdef");
    const sent = await http.adapter.port.requestApproval!(target, {
      approvalId: "apv_abcdef", tool: "shell", argsSummary: "ls", requester: { id: ALICE }, approvers: [ALICE], expiresAt: Date.now() + 60_000, buttons,
    });
    const d = await http.emu.click(GENERAL, sent.id, ALICE, buttons.deny);
    expect(d.status).toBe(200);
    expect(d.timing.ms!).toBeLessThan(3000);
    expect(await until(() => http.sink.clicks[0])).toMatchObject({ approvalId: "apv_abcdef", choice: "deny" });
  });
});
