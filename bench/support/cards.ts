/**
 * Approval cards left waiting, for benchmarks that measure what parked approvals cost everyone
 * else: `chats` private chats each ask for a note to be saved (the bench model answers with a
 * `write_file` call, which the default supervised mode sends for approval), and nobody clicks.
 */
import type { TelegramEmulator } from "../../test/emulators/telegram/index.ts";
import { CARD_TEXT } from "./emulators.ts";
import { injectPrivateMessages } from "./load.ts";

export interface ParkedCards {
  /** Cards (messages with buttons) the bot posted in those chats. */
  posted: number;
  wanted: number;
  /** ms from injection to the last card (or to giving up). */
  ms: number;
}

/**
 * Sends the card requests at once and waits until every chat shows a card, no new card came for
 * `idleMs`, or `capMs` passed. Always returns.
 */
export async function parkCards(telegram: TelegramEmulator, o: { chats: number; firstUserId: number; idleMs?: number; capMs?: number }): Promise<ParkedCards> {
  const chats = new Set<number>();
  for (let i = 0; i < o.chats; i++) chats.add(o.firstUserId + i);
  const from = telegram.calls.length;
  const t0 = Date.now();
  injectPrivateMessages(telegram, { chats: o.chats, perChat: 1, text: CARD_TEXT, firstUserId: o.firstUserId });
  const withCard = new Set<number>();
  let index = from;
  let lastNew = t0;
  for (;;) {
    for (; index < telegram.calls.length; index++) {
      const c = telegram.calls[index]!;
      if (c.method !== "sendMessage" || c.status !== 200) continue;
      const markup = c.params.reply_markup as { inline_keyboard?: unknown[] } | undefined;
      const chat = Number(c.params.chat_id);
      if (chats.has(chat) && (markup?.inline_keyboard?.length ?? 0) > 0 && !withCard.has(chat)) {
        withCard.add(chat);
        lastNew = c.at;
      }
    }
    const now = Date.now();
    if (withCard.size === o.chats || now - lastNew > (o.idleMs ?? 8_000) || now - t0 > (o.capMs ?? 45_000)) {
      return { posted: withCard.size, wanted: o.chats, ms: (withCard.size === o.chats ? lastNew : now) - t0 };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
