import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSlackAdapter, type SlackChannelAdapter } from "../../adapters/slack/adapter.ts";
import { approvalButtons } from "../../src/approval/card.ts";
import { startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";
import { ALICE, GENERAL } from "./harness.ts";
import { RecordingSink, settle, until } from "./support.ts";

const SECRET = "emulator-signing-secret";

describe("Slack HTTP Events API mode", () => {
  let emu: SlackEmulator;
  let adapter: SlackChannelAdapter;
  let sink: RecordingSink;

  beforeEach(async () => {
    emu = await startSlackEmulator();
    adapter = createSlackAdapter({ botToken: emu.botToken, signingSecret: SECRET, apiUrl: emu.apiUrl, http: { port: 0, host: "127.0.0.1" } });
    sink = new RecordingSink();
    await adapter.start(sink);
    emu.useHttp({ url: adapter.eventsUrl!, signingSecret: SECRET });
  });
  afterEach(async () => {
    await adapter.stop();
    await emu.close();
  });

  it("accepts a correctly signed mention and answers within the deadline", async () => {
    const { message, deliveries } = await emu.userPosts({ user: ALICE, channel: GENERAL, text: `<@${emu.botUserId}> hi` });
    for (const d of deliveries) {
      expect(d.status).toBe(200);
      expect(d.timing.ms!).toBeLessThan(3000);
    }
    const env = await until(() => sink.envelopes[0]);
    expect(env).toMatchObject({ id: `${GENERAL}:${message.ts}`, text: "hi", mentioned: true });
  });

  it("rejects an event with a bad signature", async () => {
    const { deliveries } = await emu.userPosts({ user: ALICE, channel: GENERAL, text: `<@${emu.botUserId}> hi` }, { wrongSecret: "not-the-secret" });
    expect(deliveries.map((d) => d.status)).toEqual([401, 401]);
    await settle();
    expect(sink.envelopes).toHaveLength(0);
  });

  it("rejects a replayed request with a stale timestamp", async () => {
    const { deliveries } = await emu.userPosts({ user: ALICE, channel: `D${ALICE}`, text: "hi" }, { timestampSkewSec: -600 });
    expect(deliveries.map((d) => d.status)).toEqual([401]);
  });

  it("gives a retried delivery (X-Slack-Retry-Num) the same id", async () => {
    await emu.userPosts({ user: ALICE, channel: `D${ALICE}`, text: "hi" });
    await until(() => sink.envelopes[0]);
    const [again] = await emu.redeliverLast();
    expect(again!.status).toBe(200);
    await until(() => sink.envelopes[1]);
    expect(sink.envelopes[1]!.id).toBe(sink.envelopes[0]!.id);
  });

  it("acks and forwards an approval click posted as a signed form", async () => {
    await emu.userPosts({ user: ALICE, channel: GENERAL, text: `<@${emu.botUserId}> go` });
    const target = (await until(() => sink.envelopes[0])).replyTo;
    const buttons = approvalButtons("apv_abcdef");
    const sent = await adapter.port.requestApproval!(target, {
      approvalId: "apv_abcdef", tool: "shell", argsSummary: "ls", requester: { id: ALICE }, approvers: [ALICE], expiresAt: Date.now() + 60_000, buttons,
    });
    const d = await emu.click(GENERAL, sent.id, ALICE, buttons.deny);
    expect(d.status).toBe(200);
    expect(d.timing.ms!).toBeLessThan(3000);
    expect(await until(() => sink.clicks[0])).toMatchObject({ approvalId: "apv_abcdef", choice: "deny" });
  });
});
