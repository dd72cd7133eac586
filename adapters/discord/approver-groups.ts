/**
 * Who may approve on Discord besides named people: members holding a named role (role ids) in the
 * server of the conversation's channel, and members with the Administrator permission (the server's
 * owner has every permission). Discord has no user groups, so every group an approver rule names is
 * unknown here. The member is fetched fresh from the API (the bot has no Server Members intent, so
 * a cached member goes stale) and kept for a minute, so a burst of clicks makes one call; a failed
 * lookup is not kept, and rejects with ApproverCheckError (the person is asked to try again).
 */
import { DiscordAPIError, PermissionFlagsBits, RESTJSONErrorCodes, type Client } from "discord.js";
import type { Logger } from "pino";
import { ApproverCheckError, type ApproverGroups, type OutboundPort } from "../../src/ports.ts";
import { LruMap } from "../../src/lru-map.ts";
import { scrubSecrets } from "../../src/observe/scrub.ts";

/** How long a member's roles and permissions are trusted, and how many members are kept. */
const CACHE_TTL_MS = 60_000;
const CACHED_MEMBERS = 10_000;

/** What an approver check needs of a server member. */
interface MemberStanding {
  roles: ReadonlySet<string>;
  administrator: boolean;
}

export interface DiscordApproverGroupsOptions {
  /** For tests: how long answers are cached (default 60 s) and the clock. */
  ttlMs?: number;
  now?: () => number;
}

const errorText = (err: unknown) => scrubSecrets(err instanceof Error ? err.message : String(err));

/**
 * The approver-group answers of the Discord port; `client` is looked up per call because it exists
 * only while the adapter is started.
 */
export function createDiscordApproverGroups(
  client: () => Client | undefined,
  log: Logger,
  options: DiscordApproverGroupsOptions = {},
): Required<Pick<OutboundPort, "isApprover" | "unknownApproverGroups">> {
  // undefined: the channel is not in a server (a DM), or the user is not in it: nobody there holds a role.
  const members = new LruMap<string, Promise<MemberStanding | undefined>>({
    max: CACHED_MEMBERS, ttlMs: options.ttlMs ?? CACHE_TTL_MS, ...(options.now ? { now: options.now } : {}),
  });

  async function lookUp(c: Client, channelId: string, userId: string): Promise<MemberStanding | undefined> {
    const channel = await c.channels.fetch(channelId);
    if (!channel || channel.isDMBased()) return undefined;
    let member;
    try {
      member = await channel.guild.members.fetch({ user: userId, force: true });
    } catch (err) {
      // Someone who is not in the server holds none of its roles: a definite no.
      if (err instanceof DiscordAPIError && err.code === RESTJSONErrorCodes.UnknownMember) return undefined;
      throw err;
    }
    return { roles: new Set(member.roles.cache.keys()), administrator: member.permissions.has(PermissionFlagsBits.Administrator) };
  }

  function standingOf(c: Client, channelId: string, userId: string): Promise<MemberStanding | undefined> {
    const key = `${channelId}:${userId}`;
    let hit = members.get(key);
    if (!hit) {
      const mine = lookUp(c, channelId, userId);
      hit = mine;
      members.set(key, mine);
      mine.catch(() => {
        if (members.get(key) === mine) members.delete(key);
      });
    }
    return hit;
  }

  return {
    async isApprover(conversationId: string, userId: string, of: ApproverGroups): Promise<boolean> {
      if (of.roles.length === 0 && !of.chatAdmins) return false;
      const c = client();
      if (!c?.isReady()) {
        log.warn({ userId }, "discord approver check before the channel is connected");
        throw new ApproverCheckError("Discord is not connected");
      }
      let standing: MemberStanding | undefined;
      try {
        standing = await standingOf(c, conversationId, userId);
      } catch (err) {
        log.warn({ conversationId, userId, err: errorText(err) }, "discord approver check failed");
        throw new ApproverCheckError(`Discord did not answer: ${errorText(err)}`);
      }
      if (!standing) return false;
      return of.roles.some((role) => standing.roles.has(role)) || (of.chatAdmins && standing.administrator);
    },

    async unknownApproverGroups(of: ApproverGroups): Promise<string[]> {
      const groups = [...new Set(of.groups)];
      const roles = [...new Set(of.roles)];
      if (roles.length === 0) return groups;
      const c = client();
      if (!c?.isReady()) throw new Error("The Discord roles named in approval rules can be checked only once the Discord channel is connected.");
      const known = new Set<string>();
      for (const guild of c.guilds.cache.values()) {
        try {
          for (const id of (await guild.roles.fetch()).keys()) known.add(id);
        } catch (err) {
          throw new Error(`Could not read the roles of the Discord server "${guild.name}" (${guild.id}) to check approval rules: ${errorText(err)}`);
        }
      }
      return [...groups, ...roles.filter((r) => !known.has(r))];
    },
  };
}
