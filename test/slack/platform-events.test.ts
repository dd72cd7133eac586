import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { classifySendFailure } from "../../src/delivery/send-errors.ts";
import { SlackApiError, slackErrorCode } from "../../adapters/slack/errors.ts";
import { ALICE, GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";
import { RecordingSink, settle, until } from "./support.ts";

describe("Slack platform events", () => {
  let h: SlackHarness;
  let sink: RecordingSink;

  beforeEach(async () => {
    h = await createSlackHarness();
    sink = new RecordingSink();
    await h.adapter.start(sink);
    await h.emulator.waitForSocket(5000);
  });
  afterEach(async () => {
    await h.close();
  });

  it("does not answer Slackbot's own posts in a DM", async () => {
    const dm = `D${ALICE}`;
    h.emulator.world.channels.add(dm);
    await h.emulator.userPosts({ user: "USLACKBOT", channel: dm, text: "You have been removed from #deploys by Ann" });
    await settle();
    expect(sink.envelopes).toHaveLength(0);
    await h.userSays("hello", { dm: true });
    expect((await until(() => sink.envelopes[0])).text).toBe("hello");
  });

  it("keeps Slack's refusal code on a failed post, so delivery never retries it", async () => {
    h.emulator.failNext("chat.postMessage", { error: "channel_not_found" });
    const err = await h.adapter.port.send({ channel: "slack", conversationId: GENERAL, threadId: "1.000001" }, { text: "hi" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SlackApiError);
    expect(slackErrorCode(err)).toBe("channel_not_found");
    expect((err as Error).message).toBe("Slack chat.postMessage failed: channel_not_found");
    expect(classifySendFailure(err)).toBe("permanent");
  });

  it("still treats a Slack outage as worth retrying", async () => {
    h.emulator.failNext("chat.postMessage", { status: 503 });
    const err = await h.adapter.port.send({ channel: "slack", conversationId: GENERAL, threadId: "1.000001" }, { text: "hi" }).catch((e: unknown) => e);
    expect(classifySendFailure(err)).toBe("transient");
  });

  it("retries the errors Slack sends in a 200 body for its own outages, but not fatal_error", async () => {
    const target = { channel: "slack", conversationId: GENERAL, threadId: "1.000001" };
    for (const error of ["internal_error", "service_unavailable", "request_timeout"]) {
      h.emulator.failNext("chat.postMessage", { error });
      const err = await h.adapter.port.send(target, { text: "hi" }).catch((e: unknown) => e);
      expect([slackErrorCode(err), classifySendFailure(err)]).toEqual([error, "transient"]);
    }
    // Slack says a fatal_error may have partly succeeded: a retry could post twice.
    h.emulator.failNext("chat.postMessage", { error: "fatal_error" });
    expect(classifySendFailure(await h.adapter.port.send(target, { text: "hi" }).catch((e: unknown) => e))).toBe("permanent");
  });
});
