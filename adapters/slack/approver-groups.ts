/**
 * Who may approve on Slack besides named people: members of user groups (`S…` ids, through
 * usergroups.users.list) and workspace admins and owners (users.info). Slack has no roles, so every
 * role an approver rule names is unknown here. Answers are cached for a minute, so a burst of
 * clicks on one card makes one Web API call; a failed call is not cached, and without another check saying yes the answer is an ApproverCheckError.
 */
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { ApproverCheckError, type ApproverGroups, type OutboundPort } from "../../src/ports.ts";
import { LruMap } from "../../src/lru-map.ts";
import { scrubSecrets } from "../../src/observe/scrub.ts";
import { slackErrorCode, toPortError } from "./errors.ts";

/** How long a group's members or a user's admin flag are trusted, and how many are kept. */
const CACHE_TTL_MS = 60_000;
const CACHED_GROUPS = 1000;
const CACHED_USERS = 10_000;

export interface SlackApproverGroupsDeps {
  client: WebClient;
  log: Logger;
  /** For tests: how long answers are cached (default 60 s) and the clock. */
  ttlMs?: number;
  now?: () => number;
}

/** A cached lookup: concurrent askers share one call; a failure is forgotten so the next ask tries again. */
function cachedLookup<T>(cache: LruMap<string, Promise<T>>, key: string, lookup: () => Promise<T>): Promise<T> {
  let hit = cache.get(key);
  if (!hit) {
    hit = lookup();
    cache.set(key, hit);
    const mine = hit;
    hit.catch(() => {
      if (cache.get(key) === mine) cache.delete(key);
    });
  }
  return hit;
}

/** The approver-group answers of the Slack port. */
export function createSlackApproverGroups(deps: SlackApproverGroupsDeps): Required<Pick<OutboundPort, "isApprover" | "unknownApproverGroups">> {
  const { client, log } = deps;
  const cacheOptions = { ttlMs: deps.ttlMs ?? CACHE_TTL_MS, ...(deps.now ? { now: deps.now } : {}) };
  const members = new LruMap<string, Promise<ReadonlySet<string>>>({ max: CACHED_GROUPS, ...cacheOptions });
  const admins = new LruMap<string, Promise<boolean>>({ max: CACHED_USERS, ...cacheOptions });

  /** Runs one check; a platform failure is logged and reads as "could not tell". */
  const orUnknown = async (method: string, check: () => Promise<boolean>, context: Record<string, string>): Promise<boolean | "unknown"> => {
    try {
      return await check();
    } catch (err) {
      // A group Slack does not know (or has disabled) has no members: a definite no.
      if (slackErrorCode(err) === "no_such_subteam") return false;
      log.warn({ method, ...context, err: scrubSecrets(toPortError(err, method).message) }, "slack approver check failed");
      return "unknown";
    }
  };

  const inGroup = (group: string, userId: string) =>
    orUnknown("usergroups.users.list", async () => {
      const users = await cachedLookup(members, group, async () => new Set((await client.usergroups.users.list({ usergroup: group })).users ?? []));
      return users.has(userId);
    }, { group });

  const isAdmin = (userId: string) =>
    orUnknown("users.info", () => cachedLookup(admins, userId, async () => {
      const user = (await client.users.info({ user: userId })).user;
      return Boolean(user?.is_admin || user?.is_owner);
    }), { userId });

  return {
    async isApprover(_conversationId: string, userId: string, of: ApproverGroups): Promise<boolean> {
      const checks = [...new Set(of.groups)].map((group) => inGroup(group, userId));
      if (of.chatAdmins) checks.push(isAdmin(userId));
      const answers = await Promise.all(checks);
      if (answers.includes(true)) return true;
      // One "yes" is enough; without one, a check that could not be made leaves the answer open.
      if (answers.includes("unknown")) throw new ApproverCheckError("Slack did not answer");
      return false;
    },

    async unknownApproverGroups(of: ApproverGroups): Promise<string[]> {
      const groups = [...new Set(of.groups)];
      const roles = [...new Set(of.roles)];
      if (groups.length === 0) return roles;
      let listed;
      try {
        listed = await client.usergroups.list({ include_disabled: true });
      } catch (err) {
        const hint = slackErrorCode(err) === "missing_scope"
          ? " Add the usergroups:read bot scope to the Slack app (see `gatehouse slack manifest`) and reinstall it."
          : "";
        throw new Error(scrubSecrets(`Could not check the Slack user groups named in approval rules: ${toPortError(err, "usergroups.list").message}.${hint}`));
      }
      const enabled = new Set((listed.usergroups ?? []).filter((g) => !g.date_delete).map((g) => g.id));
      return [...groups.filter((g) => !enabled.has(g)), ...roles];
    },
  };
}
