import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markdownToMrkdwn } from "../../adapters/slack/mrkdwn.ts";
import { Delivery } from "../../src/delivery/delivery.ts";
import type { ReplyTarget } from "../../src/envelope.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { createObserver } from "../../src/observe/observer.ts";
import { checkMrkdwn } from "../emulators/slack/mrkdwn-check.ts";
import { MARKDOWN_SAMPLES } from "../support/markdown-samples.ts";
import { GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";
import { RecordingSink, until } from "./support.ts";

describe("markdown sent to Slack", () => {
  let h: SlackHarness;
  let target: ReplyTarget;

  beforeEach(async () => {
    h = await createSlackHarness();
    const sink = new RecordingSink();
    await h.adapter.start(sink);
    await h.userSays("please help");
    target = (await until(() => sink.envelopes[0])).replyTo;
  });
  afterEach(async () => {
    await h.close();
  });

  /** The raw mrkdwn of the bot's messages in the thread, oldest first. */
  const sentTexts = () => h.emulator.messagesIn(GENERAL, target.threadId).filter((m) => m.user === h.emulator.botUserId).map((m) => m.text);

  it("Slack takes every sample as mrkdwn that reads as meant", async () => {
    const samples = Object.values(MARKDOWN_SAMPLES);
    for (const text of samples) await h.adapter.port.send(target, { text });

    const posts = h.emulator.world.calls.filter((c) => c.method === "chat.postMessage");
    expect(posts.map((c) => c.result)).toEqual(samples.map(() => "ok"));
    const sent = sentTexts();
    expect(sent).toEqual(samples.map((s) => markdownToMrkdwn(s)));
    const visible = sent.map((text) => {
      const checked = checkMrkdwn(text);
      expect(checked, text).toMatchObject({ ok: true });
      return checked.ok ? checked.visible : "";
    });
    expect(visible).toContain("See Foo now");
    expect(visible).toContain("Read https://en.wikipedia.org/wiki/Foo_(bar) first");
    expect(visible).toContain("<!channel> <@U123> @everyone");
    expect(visible).toContain("<b>hi</b> <script>alert(1)</script>\n\n<div>\n**x**\n</div>");
    expect(sent[0]).toContain("<https://en.wikipedia.org/wiki/Foo_(bar)|Foo>");
  });

  it("delivers a long ~~~ code block as several messages, each one whole code block", async () => {
    const log = silentLogger();
    const delivery = new Delivery(log, createObserver(log));
    delivery.addChannel("slack", { port: h.adapter.port, maxMessageChars: 4000, pacing: h.adapter.pacing });
    const lines = Array.from({ length: 250 }, (_, i) => `if (a${i} < b && c) { run("${i}"); }`);
    await delivery.send(target, `Here it is:\n\n~~~ts\n${lines.join("\n")}\n~~~\n\nThat is all.`);

    const sent = sentTexts();
    expect(sent.length).toBeGreaterThan(1);
    for (const text of sent) {
      expect(text).toMatch(/```\n[^`]+\n```/);
      expect(text.split("\n").filter((l) => l === "```")).toHaveLength(2);
      expect(checkMrkdwn(text)).toMatchObject({ ok: true });
    }
    const codeLines = sent.join("\n").split("\n").filter((l) => l.startsWith("if (a")).map((l) => l.replace(/&lt;/g, "<").replace(/&amp;/g, "&"));
    expect(codeLines).toEqual(lines);
  });
});
