import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
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

describe("an album", () => {
  const part = (messageId: number, extra: Record<string, unknown> = {}) =>
    classifyUpdate(parseUpdate({ update_id: 100 + messageId, message: { message_id: messageId, chat: { id: 42, type: "private" }, from, photo: [{ file_id: `p${messageId}` }], media_group_id: "13598432", ...extra } })!, ctx);

  it("is one message: every photo carries the same envelope id, so the gateway's dedupe answers it once", async () => {
    const events = [part(20, { caption: "our new office" }), part(21), part(22)];
    const ids = events.map((e) => (e.kind === "message" ? e.envelope.id : e.kind));
    expect(new Set(ids)).toEqual(new Set(["42:album:13598432"]));
    expect(events[0]!.kind === "message" && events[0]!.envelope.text).toBe("our new office");
    const dir = mkdtempSync(join(tmpdir(), "gh-album-"));
    const store = await openSqliteStore({ dataDir: dir });
    try {
      const answered = [];
      for (const id of ids) answered.push(await store.markSeen("telegram", id, 60_000));
      expect(answered).toEqual([true, false, false]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("without a caption in a private chat is answered as one album", () => {
    const event = part(30);
    expect(event.kind === "message" && event.envelope.text).toBe("(sent an album without text)");
  });
});

describe("locations, contacts, polls and stickers in a private chat", () => {
  const sent = (extra: Record<string, unknown>) => {
    const event = classifyUpdate(parseUpdate({ update_id: 200, message: { message_id: 50, chat: { id: 42, type: "private" }, from, ...extra } })!, ctx);
    expect(event.kind).toBe("message");
    return event.kind === "message" ? event.envelope.text : "";
  };

  it("reach the model with what was sent and what the bot reads, so the person gets an answer", () => {
    expect(sent({ location: { latitude: 52.52, longitude: 13.405 } })).toBe("(sent a location: 52.52, 13.405. This bot reads text messages and captions only.)");
    expect(sent({ contact: { phone_number: "+4930123", first_name: "Ann", last_name: "Lee" } })).toBe("(sent a contact card: Ann Lee, +4930123. This bot reads text messages and captions only.)");
    expect(sent({ poll: { id: "1", question: "Lunch?", options: [{ text: "Pizza", voter_count: 0 }, { text: "Soup", voter_count: 0 }], is_closed: false } })).toBe(
      '(sent a poll: "Lunch?" with the options "Pizza", "Soup". This bot reads text messages and captions only.)',
    );
    expect(sent({ sticker: { file_id: "s", emoji: "👍", width: 512, height: 512 } })).toBe("(sent a 👍 sticker. This bot reads text messages and captions only.)");
    expect(sent({ venue: { title: "Cafe Ada", address: "Main St 1", location: { latitude: 1, longitude: 2 } }, location: { latitude: 1, longitude: 2 } })).toBe(
      "(sent a place: Cafe Ada, Main St 1. This bot reads text messages and captions only.)",
    );
  });

  it("in a group are left alone", () => {
    const update = parseUpdate({ update_id: 201, message: { message_id: 51, chat: { id: -100, type: "supergroup" }, from, location: { latitude: 1, longitude: 2 } } })!;
    expect(classifyUpdate(update, ctx).kind).toBe("ignored");
  });
});
