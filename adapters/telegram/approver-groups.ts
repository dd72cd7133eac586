/**
 * Who may approve on Telegram besides named people: the administrators of the chat (getChatMember
 * status `creator` or `administrator`). A private chat has no administrators, and Telegram has
 * neither user groups nor roles, so every group or role an approver rule names is unknown here.
 * Answers are cached for a minute, so a burst of clicks makes one call. Telegram's 400 (no such user
 * or chat) is a definite no; any other failure is not cached and rejects with ApproverCheckError.
 */
import { GrammyError, type Api } from "grammy";
import type { Logger } from "pino";
import { ApproverCheckError, type ApproverGroups, type OutboundPort } from "../../src/ports.ts";
import { LruMap } from "../../src/lru-map.ts";
import { scrubSecrets } from "../../src/observe/scrub.ts";

/** How long a member's status is trusted, and how many are kept. */
const CACHE_TTL_MS = 60_000;
const CACHED_MEMBERS = 10_000;

export interface TelegramApproverGroupsDeps {
  api: Api;
  log: Logger;
  /** For tests: how long answers are cached (default 60 s) and the clock. */
  ttlMs?: number;
  now?: () => number;
}

/** Telegram wants numeric chat ids; `@channelname` stays a string. */
const chatIdOf = (conversationId: string): number | string => (/^-?\d+$/.test(conversationId) ? Number(conversationId) : conversationId);

/** The approver-group answers of the Telegram port. */
export function createTelegramApproverGroups(deps: TelegramApproverGroupsDeps): Required<Pick<OutboundPort, "isApprover" | "unknownApproverGroups">> {
  const { api, log } = deps;
  const admins = new LruMap<string, Promise<boolean>>({
    max: CACHED_MEMBERS, ttlMs: deps.ttlMs ?? CACHE_TTL_MS, ...(deps.now ? { now: deps.now } : {}),
  });

  function isChatAdmin(conversationId: string, userId: number): Promise<boolean> {
    const key = `${conversationId}:${userId}`;
    let hit = admins.get(key);
    if (!hit) {
      const mine = api.getChatMember(chatIdOf(conversationId), userId).then((m) => m.status === "creator" || m.status === "administrator");
      hit = mine;
      admins.set(key, mine);
      mine.catch(() => {
        if (admins.get(key) === mine) admins.delete(key);
      });
    }
    return hit;
  }

  return {
    async isApprover(conversationId: string, userId: string, of: ApproverGroups): Promise<boolean> {
      // Private chats have positive ids (the user's own); groups, supergroups and channels negative ones.
      if (!of.chatAdmins || /^\d+$/.test(conversationId) || !/^\d+$/.test(userId)) return false;
      try {
        return await isChatAdmin(conversationId, Number(userId));
      } catch (err) {
        // "user not found", "chat not found": nobody Telegram does not know there administers it.
        if (err instanceof GrammyError && err.error_code === 400) {
          log.info({ conversationId, userId, err: scrubSecrets(err.message) }, "telegram approver check: not a member of the chat");
          return false;
        }
        const said = scrubSecrets(err instanceof Error ? err.message : String(err));
        log.warn({ conversationId, userId, err: said }, "telegram approver check failed");
        throw new ApproverCheckError(`Telegram did not answer: ${said}`);
      }
    },

    async unknownApproverGroups(of: ApproverGroups): Promise<string[]> {
      return [...new Set(of.groups), ...new Set(of.roles)];
    },
  };
}
