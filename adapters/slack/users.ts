/**
 * Names of Slack users, looked up once with users.info and cached, so the model reads
 * "@alice" instead of "<@U0ALICE>". A failed lookup is not cached, so it is tried again later.
 */
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";

/** A cached users.info lookup. */
export class SlackUserDirectory {
  private readonly cache = new Map<string, Promise<string | undefined>>();
  private readonly client: WebClient;
  private readonly log: Logger;

  constructor(client: WebClient, log: Logger) {
    this.client = client;
    this.log = log;
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
          this.cache.delete(userId);
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
