/**
 * What the Telegram emulator remembers: chats, every message (the bot's and the users'), the
 * queue of updates not yet confirmed by the bot, callback queries waiting for an answer, the
 * record of every API call, and the per-chat send and edit rates the real Bot API limits.
 */

export interface TgUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
}

export interface TgChat {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  title?: string;
  first_name?: string;
  username?: string;
  is_forum?: boolean;
}

export interface TgEntity {
  type: string;
  offset: number;
  length: number;
  user?: TgUser;
  url?: string;
}

export interface InlineButton {
  text: string;
  callback_data?: string;
  url?: string;
}

export interface InlineKeyboard {
  inline_keyboard: InlineButton[][];
}

/** Whom a message's ForceReply opens the reply box for (emulator-only: Telegram does not return it). */
export interface ForceReply {
  /** "everyone" without `selective`; else the user ids it targets. */
  for: "everyone" | number[];
  /** @usernames the text mentions (targets too, when `selective`). */
  usernames?: string[];
  placeholder?: string;
}

/** A message as Telegram stores it; `html` keeps what the bot sent, `text` what is shown. */
export interface TgMessage {
  message_id: number;
  date: number;
  chat: TgChat;
  from: TgUser;
  /** Absent on service messages. */
  text?: string;
  entities?: TgEntity[];
  message_thread_id?: number;
  is_topic_message?: boolean;
  reply_to_message?: TgMessage;
  reply_markup?: InlineKeyboard;
  edit_date?: number;
  /** The bot asked for a reply (ForceReply) (emulator-only field). */
  forceReply?: ForceReply;
  /** The raw text as the bot sent it, before parse_mode was applied (emulator-only field). */
  sentText?: string;
  parseMode?: string;
  /** The chat a message was sent on behalf of (anonymous admin, channel), and Telegram's own forwards. */
  sender_chat?: TgChat;
  is_automatic_forward?: boolean;
  /** Service messages of a group's upgrade to a supergroup. */
  migrate_to_chat_id?: number;
  migrate_from_chat_id?: number;
}

export interface TgCallbackQuery {
  id: string;
  from: TgUser;
  message?: TgMessage;
  chat_instance: string;
  data?: string;
}

export interface TgUpdate {
  update_id: number;
  message?: TgMessage;
  edited_message?: TgMessage;
  callback_query?: TgCallbackQuery;
}

/** One API call the bot made, with the answer it got. */
export interface ApiCallRecord {
  method: string;
  params: Record<string, unknown>;
  at: number;
  status: number;
  response: unknown;
}

/** What answerCallbackQuery said to the clicker. */
export interface CallbackAnswer {
  text?: string;
  show_alert?: boolean;
}

interface PendingUpdate {
  update: TgUpdate;
  markDelivered: () => void;
}

/** The emulator's memory; the HTTP and webhook parts read and change it. */
export class EmulatorState {
  readonly bot: TgUser;
  readonly calls: ApiCallRecord[] = [];
  readonly chats = new Map<number, TgChat>();
  /** Messages by chat id, oldest first. */
  readonly messages = new Map<number, TgMessage[]>();
  readonly pending: PendingUpdate[] = [];
  readonly callbackAnswers = new Map<string, { answered?: CallbackAnswer; resolve: (a: CallbackAnswer) => void }>();
  webhook: { url: string; secretToken?: string; allowedUpdates?: string[] } | undefined;
  allowedUpdates: string[] | undefined;
  private nextUpdateId = 1000;
  private nextMessageId = new Map<number, number>();
  private nextCallbackId = 1;
  private sendTimes = new Map<number, number[]>();
  private editTimes = new Map<number, number[]>();
  /** Wakes waiting long polls and the webhook pusher when an update arrives. */
  private listeners = new Set<() => void>();

  constructor(bot: TgUser) {
    this.bot = bot;
  }

  /** Groups upgraded to supergroups: old chat id → the supergroup's id (calls to the old id fail). */
  readonly migrated = new Map<number, number>();

  rememberChat(chat: TgChat): void {
    if (!this.chats.has(chat.id)) this.chats.set(chat.id, chat);
  }

  newMessageId(chatId: number): number {
    const id = this.nextMessageId.get(chatId) ?? 1;
    this.nextMessageId.set(chatId, id + 1);
    return id;
  }

  newCallbackId(): string {
    return `cbq${this.nextCallbackId++}`;
  }

  storeMessage(message: TgMessage): void {
    const list = this.messages.get(message.chat.id) ?? [];
    list.push(message);
    this.messages.set(message.chat.id, list);
  }

  findMessage(chatId: number, messageId: number): TgMessage | undefined {
    return this.messages.get(chatId)?.find((m) => m.message_id === messageId);
  }

  /** Queues an update for the bot; the promise settles when the bot has received it. */
  enqueue(body: Omit<TgUpdate, "update_id">, updateId?: number): { update: TgUpdate; delivered: Promise<void> } {
    const update: TgUpdate = { update_id: updateId ?? this.nextUpdateId++, ...body };
    let markDelivered = () => {};
    const delivered = new Promise<void>((resolve) => (markDelivered = resolve));
    this.pending.push({ update, markDelivered });
    this.pending.sort((a, b) => a.update.update_id - b.update.update_id);
    for (const wake of [...this.listeners]) wake();
    return { update, delivered };
  }

  /** Confirms (drops) every update below `offset`, as getUpdates with an offset does. */
  confirmBelow(offset: number): void {
    while (this.pending.length > 0 && this.pending[0]!.update.update_id < offset) this.pending.shift();
  }

  /** Updates still waiting for the bot, optionally only the kinds it asked for. */
  waiting(allowed?: string[]): PendingUpdate[] {
    if (!allowed || allowed.length === 0) return this.pending;
    return this.pending.filter((p) => allowed.some((kind) => kind in p.update));
  }

  dropUpdate(updateId: number): void {
    const at = this.pending.findIndex((p) => p.update.update_id === updateId);
    if (at >= 0) this.pending.splice(at, 1);
  }

  onUpdate(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Counts a message sent to a chat; returns the seconds to wait when the chat is over its limit
   * (a burst of `perChatBurst` within a second; `groupPerMinute` within a minute in groups).
   */
  takeSendSlot(chat: TgChat, limits: { perChatBurst: number; groupPerMinute: number }, now = Date.now()): number | undefined {
    return this.takeSlot(this.sendTimes, chat, limits.perChatBurst, limits.groupPerMinute, now);
  }

  /** Counts an edit of a message in a chat, as `takeSendSlot` counts sends (edits have a budget of their own). */
  takeEditSlot(chat: TgChat, limits: { perChatBurst: number; groupEditsPerMinute: number }, now = Date.now()): number | undefined {
    return this.takeSlot(this.editTimes, chat, limits.perChatBurst, limits.groupEditsPerMinute, now);
  }

  private takeSlot(log: Map<number, number[]>, chat: TgChat, perChatBurst: number, groupPerMinute: number, now: number): number | undefined {
    const times = (log.get(chat.id) ?? []).filter((t) => now - t < 60_000);
    log.set(chat.id, times);
    const lastSecond = times.filter((t) => now - t < 1000);
    if (lastSecond.length >= perChatBurst) {
      return Math.max(1, Math.ceil((lastSecond[0]! + 1000 - now) / 1000));
    }
    const isGroup = chat.type === "group" || chat.type === "supergroup";
    if (isGroup && times.length >= groupPerMinute) {
      return Math.max(1, Math.ceil((times[0]! + 60_000 - now) / 1000));
    }
    times.push(now);
    return undefined;
  }
}
