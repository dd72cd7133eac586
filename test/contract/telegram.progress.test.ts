/** The progress contract against the Telegram adapter and emulator, in a forum supergroup (edits: about 20 a minute). */
import { runProgressContract } from "./progress-contract.ts";
import { createTelegramHarness, type TelegramHarness } from "../telegram/harness.ts";

runProgressContract<TelegramHarness>("telegram", {
  makeHarness: () => createTelegramHarness(),
  userId: "4242",
  edits: (h) => h.emulator.callsOf("editMessageText").map((c) => ({ at: c.at, limited: c.status === 429 })),
  typingCalls: (h) => h.emulator.callsOf("sendChatAction").length,
  editBudget: { limit: 20, windowMs: 60_000 },
  rawText: async (h, message) => h.emulator.botMessages(Number(message.conversationId)).find((m) => String(m.message_id) === message.id)?.sentText ?? "",
  cardLink: /<a href="https:\/\/t\.me\/c\/1000\/\d+">open the card<\/a>/,
});
