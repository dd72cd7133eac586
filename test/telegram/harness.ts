/**
 * The Telegram ChannelHarness: the real adapter (grammY inside) against the Telegram emulator.
 * Users post through the emulator's update queue, exactly as Telegram hands updates to a polling
 * bot; clicks are real callback queries; what the bot posted is read from the emulator's chats.
 */
import type { ChannelHarness, PostedUserMessage, SeenMessage, UserMessageOptions } from "../contract/harness.ts";
import { createTelegramAdapter, type OffsetStore, type TelegramAdapter, type PromptStore, type TelegramAdapterOptions } from "../../adapters/telegram/index.ts";
import { startTelegramEmulator, type TelegramEmulator, type TelegramEmulatorOptions, type TgChat, type TgMessage } from "../emulators/telegram/index.ts";

/** The group every non-DM harness message goes to: a forum supergroup, so topics are threads. */
export const HARNESS_GROUP: TgChat = { id: -1001000, type: "supergroup", title: "Team", is_forum: true };

/** An offset store kept in memory, shared by adapters that stand for restarts of one bot. */
export function memoryOffsetStore(): OffsetStore & { value: number | undefined } {
  const store = {
    value: undefined as number | undefined,
    async get() {
      return store.value;
    },
    async set(n: number) {
      store.value = n;
    },
  };
  return store;
}

/** Named values kept in memory (as the store keeps them), shared by adapters that stand for restarts of one bot. */
export function memoryValues(): PromptStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    async get(key: string) {
      return map.get(key);
    },
    async set(key: string, value: string) {
      map.set(key, value);
    },
    async list() {
      return [...map].map(([key, value]) => ({ key, value }));
    },
    async delete(key: string) {
      map.delete(key);
    },
  };
}

function seen(message: TgMessage): SeenMessage {
  return {
    id: String(message.message_id),
    text: message.text ?? "",
    buttons: (message.reply_markup?.inline_keyboard ?? []).flat().flatMap((b) => (b.callback_data !== undefined ? [{ label: b.text, payload: b.callback_data }] : [])),
    conversationId: String(message.chat.id),
    ...(message.message_thread_id !== undefined ? { threadId: String(message.message_thread_id) } : {}),
  };
}

export interface TelegramHarness extends ChannelHarness {
  adapter: TelegramAdapter;
  emulator: TelegramEmulator;
}

/** Starts an emulator and builds an adapter against it (not started). */
export async function createTelegramHarness(
  options: { emulator?: TelegramEmulatorOptions; adapter?: Partial<TelegramAdapterOptions> } = {},
): Promise<TelegramHarness> {
  const emulator = await startTelegramEmulator(options.emulator);
  const adapter = createTelegramAdapter({
    token: emulator.token,
    apiRoot: emulator.apiRoot,
    offsetStore: memoryOffsetStore(),
    pollTimeoutSeconds: 1,
    retryDelayMs: 50,
    ...options.adapter,
  });

  return {
    adapter,
    emulator,

    async userSays(text: string, o: UserMessageOptions = {}): Promise<PostedUserMessage> {
      const userId = o.userId !== undefined ? Number(o.userId) : 4242;
      const from = { id: userId, first_name: o.userName ?? `User ${userId}`, username: `user${userId}` };
      const topicId = o.threadId !== undefined ? Number(o.threadId) : undefined;
      const posted = emulator.userMessage({
        text,
        from,
        ...(o.dm ? {} : { chat: HARNESS_GROUP, mentionBot: o.mention ?? true }),
        ...(topicId !== undefined && !o.dm ? { topicId } : {}),
      });
      await posted.delivered;
      return {
        messageId: String(posted.message.message_id),
        conversationId: String(posted.message.chat.id),
        ...(topicId !== undefined && !o.dm ? { threadId: String(topicId) } : {}),
      };
    },

    async botMessages(conversationId: string, threadId?: string): Promise<SeenMessage[]> {
      return emulator.botMessages(Number(conversationId), threadId !== undefined ? Number(threadId) : undefined).map(seen);
    },

    async click(message: SeenMessage, payload: string, userId: string): Promise<{ shownToClicker?: string }> {
      const click = emulator.clickButton({
        chatId: Number(message.conversationId),
        messageId: Number(message.id),
        data: payload,
        from: { id: Number(userId), first_name: `User ${userId}` },
      });
      const answer = await Promise.race([
        click.answered,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the bot did not answer the callback query")), 8000)),
      ]);
      return answer.text !== undefined ? { shownToClicker: answer.text } : {};
    },

    async redeliverLast(): Promise<void> {
      await emulator.redeliverLast().delivered;
    },

    async close(): Promise<void> {
      await adapter.stop();
      await emulator.close();
    },
  };
}
