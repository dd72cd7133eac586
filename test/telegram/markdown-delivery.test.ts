import { afterEach, describe, expect, it } from "vitest";
import { Delivery } from "../../src/delivery/delivery.ts";
import type { ReplyTarget } from "../../src/envelope.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { createObserver } from "../../src/observe/observer.ts";
import { MARKDOWN_SAMPLES } from "../support/markdown-samples.ts";
import { createTelegramHarness, type TelegramHarness } from "./harness.ts";

const CHAT = 5001;
const target: ReplyTarget = { channel: "telegram", conversationId: String(CHAT) };

let h: TelegramHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The real adapter's port (grammY) against the emulator, which parses parse_mode HTML as the Bot API does. */
async function harness(): Promise<TelegramHarness> {
  h = await createTelegramHarness({ emulator: { limits: { perChatBurst: 1000 } } });
  h.emulator.state.rememberChat({ id: CHAT, type: "private", first_name: "Ada" });
  return h;
}

describe("markdown sent to Telegram", () => {
  it("Telegram accepts the HTML of every sample, with no fallback to plain text", async () => {
    const h = await harness();
    const samples = Object.values(MARKDOWN_SAMPLES);
    for (const text of samples) await h.adapter.port.send(target, { text });

    const calls = h.emulator.callsOf("sendMessage");
    expect(calls.map((c) => [c.status, c.params.parse_mode])).toEqual(samples.map(() => [200, "HTML"]));
    const shown = h.emulator.botMessages(CHAT).map((m) => m.text);
    expect(shown).toHaveLength(samples.length);
    expect(shown).toContain("See Foo now");
    expect(shown).toContain("Run:\nif a < b and c & d: pass\ndone");
    expect(shown).toContain("<b>hi</b> <script>alert(1)</script>\n\n<div>\n**x**\n</div>");
    expect(shown).toContain("Fruit               | Qty\n--------------------+----\napple               |   3\nkiwi (https://k.io) |  12\n漢字                |   7");
    expect(calls[0]!.params.text).toContain('href="https://en.wikipedia.org/wiki/Foo_(bar)"');
  });

  it("delivers a long ~~~ code block as several messages, each one whole code block", async () => {
    const h = await harness();
    const log = silentLogger();
    const delivery = new Delivery(log, createObserver(log));
    delivery.addChannel("telegram", { port: h.adapter.port, maxMessageChars: 4096, pacing: h.adapter.pacing });
    const lines = Array.from({ length: 300 }, (_, i) => `if (a${i} < b && c) { run("${i}"); }`);
    await delivery.send(target, `Here it is:\n\n~~~ts\n${lines.join("\n")}\n~~~\n\nThat is all.`);

    const calls = h.emulator.callsOf("sendMessage");
    expect(calls.length).toBeGreaterThan(1);
    for (const call of calls) {
      expect(call.status).toBe(200);
      expect(call.params.parse_mode).toBe("HTML");
      expect(String(call.params.text)).toMatch(/<pre><code class="language-ts">[^<]*<\/code><\/pre>/);
    }
    const shown = h.emulator.botMessages(CHAT).map((m) => m.text);
    expect(shown[0]!.startsWith("Here it is:\n\nif (a0 < b && c)")).toBe(true);
    expect(shown.at(-1)!.endsWith('run("299"); }\n\nThat is all.')).toBe(true);
    const codeLines = shown.join("\n").split("\n").filter((l) => l.startsWith("if (a"));
    expect(codeLines).toEqual(lines);
  });
});
