/**
 * Names of Slack users, looked up with users.info and cached, so the model reads "@alice" instead
 * of "<@U0ALICE>". The cache keeps the most recently used names for an hour each (a renamed user is
 * read again); a failed lookup is not cached, so it is tried again later.
 */
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { LruMap } from "../../src/lru-map.ts";

/** How many users' names are kept, and for how long. */
const CACHED_USERS = 5000;
const NAME_TTL_MS = 60 * 60_000;

/** A cached users.info lookup. */
export class SlackUserDirectory {
  private readonly cache: LruMap<string, Promise<string | undefined>>;
  private readonly client: WebClient;
  private readonly log: Logger;

  constructor(client: WebClient, log: Logger, options: { max?: number; ttlMs?: number } = {}) {
    this.client = client;
    this.log = log;
    this.cache = new LruMap({ max: options.max ?? CACHED_USERS, ttlMs: options.ttlMs ?? NAME_TTL_MS });
  }

  /** Users whose names are cached. */
  get size(): number {
    return this.cache.size;
  }

  /** The display name of a user, or undefined when Slack would not say. */
  nameOf(userId: string): Promise<string | undefined> {
    let hit = this.cache.get(userId);
    if (!hit) {
      hit = this.client.users
        .info({ user: userId })
        .then((r) => {
          const u = r.user;
          return u?.profile?.display_name || u?.real_name || u?.name || undefined;
        })
        .catch((err: unknown) => {
          if (this.cache.get(userId) === hit) this.cache.delete(userId);
          this.log.debug({ userId, err: String(err) }, "users.info failed; keeping the raw id");
          return undefined;
        });
      this.cache.set(userId, hit);
    }
    return hit;
  }

  /** Replaces every `<@U…>` mention in Slack text with `@name`. */
  async resolveMentions(text: string): Promise<string> {
    const ids = [...new Set([...text.matchAll(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g)].map((m) => m[1]!))];
    const names = new Map<string, string>();
    await Promise.all(ids.map(async (id) => names.set(id, (await this.nameOf(id)) ?? id)));
    return text.replace(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g, (_m, id: string) => `@${names.get(id) ?? id}`);
  }
}
