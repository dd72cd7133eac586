/**
 * The Telegram side of the "Deny with reason…" contract: a click on the card's button makes the bot
 * post a forced reply addressed to the clicker, and the person answers by replying to it.
 */
import type { ReasonForm, ReasonHarness } from "../contract/deny-reason-contract.ts";
import type { TgMessage } from "../emulators/telegram/index.ts";
import type { TelegramHarness } from "./harness.ts";

/** How long a reply waits for the bot to answer it, or to show the decision on the card. */
const ANSWER_WAIT_MS = 5000;

async function poll<T>(check: () => T | undefined, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 15));
  }
}

/** Whether `message` is a forced reply that opens the reply box for `userId`. */
export function asksForReplyFrom(message: TgMessage, userId: number): boolean {
  const f = message.forceReply;
  return f !== undefined && (f.for === "everyone" || f.for.includes(userId));
}

/** The harness, able to ask for and give a reason as a person. */
export function withTelegramReasonForms(h: TelegramHarness): TelegramHarness & ReasonHarness {
  const { emulator } = h;
  const prompts = (chatId: number, userId: number) => emulator.botMessages(chatId).filter((m) => asksForReplyFrom(m, userId));
  return {
    ...h,
    async openReasonForm(card, payload, userId): Promise<ReasonForm> {
      const chatId = Number(card.conversationId);
      const from = { id: Number(userId), first_name: `User ${userId}` };
      const before = prompts(chatId, from.id).length;
      const click = emulator.clickButton({ chatId, messageId: Number(card.id), data: payload, from });
      await click.answered;
      const prompt = await poll(() => prompts(chatId, from.id)[before], 3000);
      if (!prompt) throw new Error(`no prompt asked ${userId} for a reason`);
      return {
        async submit(reason) {
          const chat = emulator.state.chats.get(chatId)!;
          const posted = emulator.userMessage({
            text: reason, from, chat, replyToMessageId: prompt.message_id,
            ...(prompt.message_thread_id !== undefined ? { topicId: prompt.message_thread_id } : {}),
          });
          await posted.delivered;
          const cardBefore = emulator.state.findMessage(chatId, Number(card.id))?.edit_date;
          // The bot either answers the reply (a refusal) or, taking the decision, edits the card.
          const outcome = await poll(() => {
            const answer = emulator.botMessages(chatId).find((m) => m.reply_to_message?.message_id === posted.message.message_id);
            if (answer) return { shownToClicker: answer.text };
            const now = emulator.state.findMessage(chatId, Number(card.id));
            return now && now.edit_date !== cardBefore && !now.reply_markup ? {} : undefined;
          }, ANSWER_WAIT_MS);
          if (!outcome) throw new Error("the bot neither answered the reply nor decided the card");
          return outcome;
        },
      };
    },
    formsShown: (userId) => [...emulator.state.chats.keys()].reduce((n, chatId) => n + prompts(chatId, Number(userId)).length, 0),
  };
}
