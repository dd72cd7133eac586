/**
 * Chat members in the Telegram emulator: each person's status in a chat (creator, administrator,
 * member, left) and the `getChatMember` method over it. A status a test set wins; otherwise someone
 * who wrote in the chat (and the bot, and a private chat's own user) is a member, someone Telegram
 * knows from elsewhere has left, and anyone else is "user not found" — as is an unknown chat.
 */
import { z } from "zod";
import { fail, ok } from "./methods.ts";
import type { EmulatorState, TgUser } from "./state.ts";
import type { ApiAnswer } from "./updates.ts";

/** The statuses the emulator models (Telegram also has "restricted" and "kicked"). */
export type ChatMemberStatus = "creator" | "administrator" | "member" | "left";

const GetChatMemberSchema = z.object({
  chat_id: z.union([z.number().int(), z.string().regex(/^-?\d+$/).transform(Number)]),
  user_id: z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]),
});

/** The rights an administrator gets in the emulator (all but promoting others). */
const ADMIN_RIGHTS = {
  can_be_edited: false, is_anonymous: false, can_manage_chat: true, can_delete_messages: true, can_manage_video_chats: true,
  can_restrict_members: true, can_promote_members: false, can_change_info: true, can_invite_users: true, can_post_stories: false,
  can_edit_stories: false, can_delete_stories: false, can_pin_messages: true,
};

/** Who is what in which chat. */
export class ChatMembers {
  private readonly statuses = new Map<number, Map<number, { user: TgUser; status: ChatMemberStatus }>>();
  private readonly state: EmulatorState;

  constructor(state: EmulatorState) {
    this.state = state;
  }

  /** Gives `user` this status in the chat. */
  set(chatId: number, user: TgUser, status: ChatMemberStatus): void {
    const chat = this.statuses.get(chatId) ?? new Map();
    chat.set(user.id, { user, status });
    this.statuses.set(chatId, chat);
  }

  /** `getChatMember(chat_id, user_id)`. */
  getChatMember(raw: Record<string, unknown>): ApiAnswer {
    const p = GetChatMemberSchema.safeParse(raw);
    if (!p.success) return fail(400, `Bad Request: ${p.error.issues[0]!.path.join(".") || "parameters"} is invalid`);
    const chat = this.state.chats.get(p.data.chat_id);
    if (!chat) return fail(400, "Bad Request: chat not found");
    const userId = p.data.user_id;
    const explicit = this.statuses.get(chat.id)?.get(userId);
    if (explicit) return ok(this.json(explicit.user, explicit.status));
    const wroteHere = (this.state.messages.get(chat.id) ?? []).find((m) => m.from.id === userId)?.from;
    if (wroteHere) return ok(this.json(wroteHere, "member"));
    if (userId === this.state.bot.id) return ok(this.json(this.state.bot, "member"));
    const known = this.knownUser(userId);
    if (!known) return fail(400, "Bad Request: user not found");
    return ok(this.json(known, chat.type === "private" && chat.id === userId ? "member" : "left"));
  }

  private knownUser(userId: number): TgUser | undefined {
    for (const messages of this.state.messages.values()) {
      const found = messages.find((m) => m.from.id === userId);
      if (found) return found.from;
    }
    for (const chat of this.statuses.values()) {
      const found = chat.get(userId);
      if (found) return found.user;
    }
    return undefined;
  }

  /** The ChatMember object as the Bot API shows it. */
  private json(user: TgUser, status: ChatMemberStatus): Record<string, unknown> {
    if (status === "creator") return { status, user, is_anonymous: false };
    if (status === "administrator") return { status, user, ...ADMIN_RIGHTS };
    return { status, user };
  }
}
