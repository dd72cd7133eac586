import { describe, expect, it } from "vitest";
import { classifyUpdate, parseUpdate } from "../../adapters/telegram/inbound.ts";
import { TELEGRAM_CAPABILITIES } from "../../adapters/telegram/index.ts";

const ctx = { bot: { id: 1, username: "gatehouse_bot" }, capabilities: TELEGRAM_CAPABILITIES, botPostedIn: () => false };
const from = { id: 42, is_bot: false, first_name: "Ada" };

describe("Telegram messages without text", () => {
  it("in a private chat become a message the bot answers, saying what was sent", () => {
    const update = parseUpdate({ update_id: 7, message: { message_id: 3, chat: { id: 42, type: "private" }, from, voice: { file_id: "v", duration: 2 } } })!;
    const event = classifyUpdate(update, ctx);
    expect(event.kind).toBe("message");
    expect(event.kind === "message" && event.envelope.text).toBe("(sent a voice without text)");
  });

  it("in a group are left alone", () => {
    const update = parseUpdate({ update_id: 8, message: { message_id: 4, chat: { id: -100, type: "supergroup" }, from, photo: [{ file_id: "p" }] } })!;
    expect(classifyUpdate(update, ctx).kind).toBe("ignored");
  });
});

describe("commands for another bot", () => {
  it("are left alone, even in a private chat", () => {
    const text = "/stop@other_bot";
    const update = parseUpdate({
      update_id: 9,
      message: { message_id: 5, chat: { id: 42, type: "private" }, from, text, entities: [{ type: "bot_command", offset: 0, length: text.length }] },
    })!;
    expect(classifyUpdate(update, ctx)).toMatchObject({ kind: "ignored", reason: "a command for another bot" });
    const ours = parseUpdate({
      update_id: 10,
      message: { message_id: 6, chat: { id: 42, type: "private" }, from, text: "/stop@gatehouse_bot", entities: [{ type: "bot_command", offset: 0, length: 19 }] },
    })!;
    expect(classifyUpdate(ours, ctx).kind).toBe("message");
  });
});
