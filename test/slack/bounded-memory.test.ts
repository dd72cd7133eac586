import { describe, expect, it } from "vitest";
import type { WebClient } from "@slack/web-api";
import { BotThreads } from "../../adapters/slack/outbound.ts";
import { SlackUserDirectory } from "../../adapters/slack/users.ts";
import { silentLogger } from "../../src/observe/logger.ts";

/** A Web API client whose users.info answers with a name made from the id, counting lookups. */
function fakeClient() {
  const lookups: string[] = [];
  const client = {
    users: {
      info: async ({ user }: { user: string }) => {
        lookups.push(user);
        return { ok: true, user: { id: user, name: `name-${user}`, profile: { display_name: `Name ${user}` } } };
      },
    },
  } as unknown as WebClient;
  return { client, lookups };
}

describe("Slack memory that does not grow with the number of users and threads", () => {
  it("caches at most its bound of user names after 10,000 distinct users", async () => {
    const { client } = fakeClient();
    const users = new SlackUserDirectory(client, silentLogger(), { max: 200 });
    for (let i = 0; i < 10_000; i++) await users.nameOf(`U${i}`);
    expect(users.size).toBe(200);
    expect(await users.nameOf("U9999")).toBe("Name U9999");
  });

  it("looks a cached name up once, and again after its time to live", async () => {
    const { client, lookups } = fakeClient();
    const users = new SlackUserDirectory(client, silentLogger(), { ttlMs: 50 });
    await users.nameOf("U1");
    await users.nameOf("U1");
    expect(lookups).toEqual(["U1"]);
    await new Promise((r) => setTimeout(r, 80));
    await users.nameOf("U1");
    expect(lookups).toEqual(["U1", "U1"]);
  });

  it("remembers at most its bound of bot threads, keeping the ones in use", () => {
    const threads = new BotThreads(100);
    threads.add("C1", "1.0");
    for (let i = 0; i < 10_000; i++) {
      threads.add("C2", `${i}.0`);
      expect(threads.has("C1", "1.0")).toBe(true);
    }
    expect(threads.size).toBe(100);
    expect(threads.has("C2", "0.0")).toBe(false);
  });
});
