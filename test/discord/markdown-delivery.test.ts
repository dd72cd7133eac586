import { MessageFlags } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { toDiscordMarkdown } from "../../adapters/discord/markdown.ts";
import { Delivery } from "../../src/delivery/delivery.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { createObserver } from "../../src/observe/observer.ts";
import { MARKDOWN_SAMPLES } from "../support/markdown-samples.ts";
import { startHarness, type Started } from "./setup.ts";

let started: Started | undefined;
afterEach(async () => {
  await started?.h.close();
  started = undefined;
});

async function threadTarget() {
  started = await startHarness();
  const posted = await started.h.userSays("start", { userId: "300000000000000001" });
  const [env] = await started.sink.waitForEnvelopes(1);
  return { s: started, posted, target: env!.replyTo };
}

describe("markdown sent to Discord", () => {
  it("Discord takes every sample, with link embeds suppressed", async () => {
    const { s, posted, target } = await threadTarget();
    const samples = Object.values(MARKDOWN_SAMPLES);
    for (const text of samples) await s.h.adapter.port.send(target, { text });

    const creates = s.h.emulator.calls.filter((c) => c.route === "createMessage");
    expect(creates.map((c) => c.status)).toEqual(samples.map(() => 200));
    for (const call of creates) expect(call.body).toMatchObject({ flags: MessageFlags.SuppressEmbeds, allowed_mentions: { parse: [] } });
    const shown = (await s.h.botMessages(posted.conversationId, posted.threadId)).map((m) => m.text);
    expect(shown).toEqual(samples.map((text) => toDiscordMarkdown(text)));
    expect(shown).toContain("See [Foo](https://en.wikipedia.org/wiki/Foo_(bar)) now");
  });

  it("delivers a long ~~~ code block as several messages, each one whole code block", async () => {
    const { s, posted, target } = await threadTarget();
    const log = silentLogger();
    const delivery = new Delivery(log, createObserver(log));
    delivery.addChannel("discord", { port: s.h.adapter.port, maxMessageChars: 2000, pacing: s.h.adapter.pacing });
    const lines = Array.from({ length: 150 }, (_, i) => `if (a${i} < b && c) { run("${i}"); }`);
    await delivery.send(target, `Here it is:\n\n~~~ts\n${lines.join("\n")}\n~~~\n\nThat is all.`);

    const shown = (await s.h.botMessages(posted.conversationId, posted.threadId)).map((m) => m.text);
    expect(shown.length).toBeGreaterThan(1);
    for (const text of shown) {
      expect(text.length).toBeLessThanOrEqual(2000);
      expect(text.split("\n").filter((l) => l.startsWith("```"))).toEqual(["```ts", "```"]);
    }
    expect(shown.join("\n").split("\n").filter((l) => l.startsWith("if (a"))).toEqual(lines);
  });

  it("delivers a long table as several messages, each a laid-out table with its header, no row lost", async () => {
    const { s, posted, target } = await threadTarget();
    const log = silentLogger();
    const delivery = new Delivery(log, createObserver(log));
    delivery.addChannel("discord", { port: s.h.adapter.port, maxMessageChars: 2000, pacing: s.h.adapter.pacing });
    const rows = Array.from({ length: 90 }, (_, i) => `| web-${String(i).padStart(3, "0")} | ok | ${i} days |`);
    await delivery.send(target, `Fleet:\n\n| host | state | uptime |\n|---|---|---|\n${rows.join("\n")}\n\nAll up.`);

    const shown = (await s.h.botMessages(posted.conversationId, posted.threadId)).map((m) => m.text);
    const tables = shown.filter((t) => t.includes("web-"));
    expect(tables.length).toBeGreaterThan(1);
    for (const text of tables) {
      expect(text.length).toBeLessThanOrEqual(2000);
      expect(text).not.toMatch(/^\|/m);
      expect(text).toMatch(/^```\nhost +\| state +\| uptime\n/m);
    }
    const hosts = tables.join("\n").match(/web-\d{3}/g);
    expect(hosts).toEqual(rows.map((r) => r.slice(2, 9)));
    expect(s.h.emulator.calls.filter((c) => c.route === "createMessage" && c.status !== 200)).toEqual([]);
  });
});
