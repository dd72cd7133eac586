/**
 * A local Telegram Bot API server for tests: grammY talks to it through `client.apiRoot`.
 * Tests act as users with `userMessage` / `clickButton`, read what the bot posted with
 * `chatMessages`, make chat admins with `setChatMember`, inspect `calls`, and inject faults with `failNext`.
 */
import { createMethods, type Limits } from "./methods.ts";
import { startHttpApi, type Fault } from "./http-api.ts";
import { EmulatorState, type ApiCallRecord, type CallbackAnswer, type TgChat, type TgEntity, type TgMessage, type TgUpdate, type TgUser } from "./state.ts";
import { LongPoller, WebhookPusher, type WebhookAttempt } from "./updates.ts";
import { ChatMembers, type ChatMemberStatus } from "./chat-members.ts";

export type { ApiCallRecord, CallbackAnswer, ChatMemberStatus, TgChat, TgMessage, TgUpdate, TgUser, Fault, WebhookAttempt };

export interface TelegramEmulatorOptions {
  /** The one token the emulator accepts (default `123456:TEST-token`). */
  token?: string;
  botId?: number;
  botUsername?: string;
  limits?: Partial<Limits>;
  /** Delay before a failed webhook POST is retried (default 100 ms). */
  webhookRetryMs?: number;
}

export interface UserMessageInput {
  text: string;
  from?: Partial<TgUser> & { id: number };
  /** Default: the sender's private chat. */
  chat?: TgChat;
  /** Prefix the text with `@<bot username>` and a mention entity. */
  mentionBot?: boolean;
  /** Extra entities (offsets into the final text). */
  entities?: TgEntity[];
  /** Reply to this message id in the same chat. */
  replyToMessageId?: number;
  /** Post in this forum topic (the chat must be a forum supergroup). */
  topicId?: number;
  /**
   * Sent on behalf of a chat, as Telegram delivers it: the group itself for an anonymous admin
   * (`from` is @GroupAnonymousBot), or a channel the person posts as (`from` is @Channel_Bot).
   */
  senderChat?: TgChat;
  /** A post of this linked channel, forwarded into the discussion group by Telegram (`from` 777000). */
  automaticForwardFrom?: TgChat;
}

/** The senders Telegram puts in `from` when a message is not from a person's own account. */
export const GROUP_ANONYMOUS_BOT: TgUser = { id: 1087968824, is_bot: true, first_name: "Group", username: "GroupAnonymousBot" };
export const CHANNEL_BOT: TgUser = { id: 136817688, is_bot: true, first_name: "Channel", username: "Channel_Bot" };
export const TELEGRAM_SERVICE: TgUser = { id: 777000, is_bot: false, first_name: "Telegram" };

export interface InjectedUpdate {
  update: TgUpdate;
  /** Settles when the bot has received the update (poll answered or webhook 2xx). */
  delivered: Promise<void>;
}

const DEFAULT_USER: TgUser = { id: 4242, is_bot: false, first_name: "Ada", username: "ada" };

/** Starts the emulator; `close()` ends it. */
export async function startTelegramEmulator(options: TelegramEmulatorOptions = {}) {
  const token = options.token ?? "123456:TEST-token";
  const bot: TgUser = { id: options.botId ?? 123456, is_bot: true, first_name: "Gatehouse", username: options.botUsername ?? "gatehouse_bot" };
  const state = new EmulatorState(bot);
  const limits: Limits = { perChatBurst: 3, groupPerMinute: 20, groupEditsPerMinute: 20, ...options.limits };
  const poller = new LongPoller(state);
  const pusher = new WebhookPusher(state, options.webhookRetryMs ?? 100);
  const faults = new Map<string, Fault[]>();
  const members = new ChatMembers(state);
  const methods = {
    ...createMethods(state, limits, {
      onWebhookChange: () => {
        if (state.webhook) {
          poller.cancel();
          pusher.start();
        }
      },
    }),
    getChatMember: (raw: Record<string, unknown>) => members.getChatMember(raw),
  };
  const { server, url } = await startHttpApi({ state, token, methods, poller, faults });
  let lastUserUpdate: TgUpdate | undefined;

  function userMessage(input: UserMessageInput): InjectedUpdate & { message: TgMessage } {
    const person: TgUser = { ...DEFAULT_USER, ...input.from, is_bot: input.from?.is_bot ?? false };
    const chat: TgChat = input.chat ?? { id: person.id, type: "private", first_name: person.first_name, ...(person.username ? { username: person.username } : {}) };
    const senderChat = input.automaticForwardFrom ?? input.senderChat;
    const from: TgUser = input.automaticForwardFrom ? TELEGRAM_SERVICE : senderChat ? (senderChat.id === chat.id ? GROUP_ANONYMOUS_BOT : CHANNEL_BOT) : person;
    state.rememberChat(chat);
    const entities: TgEntity[] = [];
    let text = input.text;
    if (input.mentionBot) {
      const mention = `@${bot.username}`;
      text = `${mention} ${text}`;
      entities.push({ type: "mention", offset: 0, length: mention.length });
    }
    const command = /^\/[a-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text);
    if (command) entities.push({ type: "bot_command", offset: 0, length: command[0].length });
    entities.push(...(input.entities ?? []));
    const replyTo = input.replyToMessageId !== undefined ? state.findMessage(chat.id, input.replyToMessageId) : undefined;
    // Outside forum topics, a reply in a supergroup carries the id of its reply chain's first message
    // as message_thread_id (without is_topic_message), as the Bot API sends it.
    const chain = replyTo && chat.type === "supergroup" && input.topicId === undefined && !replyTo.is_topic_message ? (replyTo.message_thread_id ?? replyTo.message_id) : undefined;
    const message: TgMessage = {
      message_id: state.newMessageId(chat.id),
      date: Math.floor(Date.now() / 1000),
      chat,
      from,
      text,
      ...(entities.length > 0 ? { entities } : {}),
      ...(input.topicId !== undefined ? { message_thread_id: input.topicId, is_topic_message: true } : chain !== undefined ? { message_thread_id: chain } : {}),
      ...(replyTo ? { reply_to_message: replyTo } : {}),
      ...(senderChat ? { sender_chat: senderChat } : {}),
      ...(input.automaticForwardFrom ? { is_automatic_forward: true } : {}),
    };
    state.storeMessage(message);
    const injected = state.enqueue({ message });
    lastUserUpdate = injected.update;
    return { ...injected, message };
  }

  function clickButton(input: { chatId: number; messageId: number; data: string; from?: Partial<TgUser> & { id: number } }) {
    const message = state.findMessage(input.chatId, input.messageId);
    if (!message) throw new Error(`no message ${input.messageId} in chat ${input.chatId}`);
    const from: TgUser = { ...DEFAULT_USER, ...input.from, is_bot: false };
    const id = state.newCallbackId();
    let resolve: (a: CallbackAnswer) => void = () => {};
    const answered = new Promise<CallbackAnswer>((r) => (resolve = r));
    state.callbackAnswers.set(id, { resolve });
    const injected = state.enqueue({ callback_query: { id, from, message, chat_instance: `ci${input.chatId}`, data: input.data } });
    return { ...injected, queryId: id, answered };
  }

  return {
    apiRoot: url,
    token,
    bot,
    state,
    calls: state.calls,
    webhookAttempts: pusher.attempts as readonly WebhookAttempt[],
    userMessage,
    clickButton,
    /** Gives a person a status in a chat (creator, administrator, member, left), as getChatMember then reports. */
    setChatMember(chat: TgChat, user: Partial<TgUser> & { id: number }, status: ChatMemberStatus): void {
      state.rememberChat(chat);
      members.set(chat.id, { is_bot: false, first_name: `User ${user.id}`, ...user }, status);
    },
    /**
     * Upgrades a basic group to a supergroup, as Telegram does when an admin turns on a feature
     * only supergroups have: a new chat id (-100…), the old id refused from then on with
     * `migrate_to_chat_id`, and the two service messages. Returns the supergroup.
     */
    upgradeToSupergroup(group: TgChat): TgChat {
      const supergroup: TgChat = { id: Number(`-100${Math.abs(group.id)}`), type: "supergroup", ...(group.title ? { title: group.title } : {}) };
      state.rememberChat(supergroup);
      const date = Math.floor(Date.now() / 1000);
      const from: TgUser = { ...DEFAULT_USER };
      const old: TgMessage = { message_id: state.newMessageId(group.id), date, chat: group, from, migrate_to_chat_id: supergroup.id };
      const started: TgMessage = { message_id: state.newMessageId(supergroup.id), date, chat: supergroup, from: { id: 1087968824, is_bot: true, first_name: "Group" }, migrate_from_chat_id: group.id };
      state.storeMessage(old);
      state.storeMessage(started);
      state.enqueue({ message: old });
      state.enqueue({ message: started });
      state.migrated.set(group.id, supergroup.id);
      return supergroup;
    },
    /** The calls the bot made to one method, oldest first. */
    callsOf(method: string): ApiCallRecord[] {
      return state.calls.filter((c) => c.method === method);
    },
    /** The next `count` calls of `method` get this fault instead of their normal answer. */
    failNext(method: string, fault: Fault, count = 1): void {
      const list = faults.get(method) ?? [];
      for (let i = 0; i < count; i++) list.push(fault);
      faults.set(method, list);
    },
    /**
     * Delivers the last user message again, as the bot sees it after a crash before its offset was
     * saved: same message, same chat. With polling the already-confirmed update_id cannot be served
     * again, so it travels under a new update_id; with a webhook the same update is POSTed again.
     */
    redeliverLast(): InjectedUpdate {
      if (!lastUserUpdate) throw new Error("no user message to redeliver");
      const { update_id, ...body } = lastUserUpdate;
      return state.webhook ? state.enqueue(body, update_id) : state.enqueue(body);
    },
    /** Messages in a chat (optionally one forum topic), oldest first, as currently shown. */
    chatMessages(chatId: number, topicId?: number): TgMessage[] {
      return (state.messages.get(chatId) ?? []).filter((m) => topicId === undefined || m.message_thread_id === topicId);
    },
    /** Messages the bot posted in a chat (optionally one topic). */
    botMessages(chatId: number, topicId?: number): TgMessage[] {
      return (state.messages.get(chatId) ?? []).filter((m) => m.from.id === bot.id && (topicId === undefined || m.message_thread_id === topicId));
    },
    async close(): Promise<void> {
      pusher.stop();
      poller.cancel();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The running emulator, as returned by `startTelegramEmulator`. */
export type TelegramEmulator = Awaited<ReturnType<typeof startTelegramEmulator>>;
