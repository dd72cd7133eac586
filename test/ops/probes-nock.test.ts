/**
 * Doctor's and status's online probes: each is one HTTP call to a platform (or two, for Discord),
 * answered here by nock in the shapes the real APIs use.
 */
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { discordApplicationFlags, probeModel, probeSlack, probeTelegram } from "../../src/cli/probes.ts";
import { discordInviteUrl, DISCORD_PERMISSIONS } from "../../src/cli/discord-invite.ts";

beforeEach(() => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
});
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

describe("the online probes", () => {
  it("reads the Slack app's scopes from auth.test's x-oauth-scopes header", async () => {
    nock("https://slack.example.test")
      .post("/api/auth.test")
      .matchHeader("authorization", "Bearer xoxb-1-2-3")
      .reply(200, { ok: true, user: "gatehouse", team: "Acme" }, { "x-oauth-scopes": "chat:write, commands,users:read" });
    const probe = await probeSlack("https://slack.example.test/api", "xoxb-1-2-3");
    expect(probe).toMatchObject({ ok: true, detail: "auth.test: gatehouse in Acme", scopes: ["chat:write", "commands", "users:read"] });
  });

  it("says which Slack error refused the token", async () => {
    nock("https://slack.example.test").post("/api/auth.test").reply(200, { ok: false, error: "invalid_auth" });
    expect(await probeSlack("https://slack.example.test/api/", "xoxb-bad")).toMatchObject({ ok: false, detail: expect.stringContaining("invalid_auth") });
  });

  it("tells a model endpoint that refuses the key from one that works", async () => {
    nock("https://models.example.test").get("/v1/models").reply(401, {});
    expect(await probeModel("https://models.example.test/v1", "sk-x")).toMatchObject({ ok: false, detail: expect.stringContaining("OPENAI_API_KEY") });
    nock("https://models.example.test").get("/v1/models").reply(200, { data: [{ id: "a" }, { id: "b" }, { id: "c" }, { id: "d" }] });
    expect(await probeModel("https://models.example.test/v1", "sk-x")).toMatchObject({ ok: true, detail: "GET /models: 4 models (a, b, c, …)" });
  });

  it("reports Telegram's privacy mode from getMe", async () => {
    nock("https://tg.example.test").get("/bot1:abc/getMe").reply(200, { ok: true, result: { id: 1, username: "gh_bot", can_read_all_group_messages: false } });
    expect(await probeTelegram("https://tg.example.test", "1:abc")).toMatchObject({ ok: true, detail: "getMe: @gh_bot", readsAllGroupMessages: false });
  });

  it("reads the Discord application's id with its flags, for the invite URL", async () => {
    nock("https://discord.example.test").get("/api/v10/applications/@me").matchHeader("authorization", "Bot t0ken").reply(200, { id: "1234567890", flags: 1 << 19 });
    expect(await discordApplicationFlags("https://discord.example.test/api", "t0ken")).toEqual({ id: "1234567890", flags: 1 << 19 });
  });
});

describe("the Discord invite URL", () => {
  it("asks for the bot and command scopes and exactly the permissions the bot uses", () => {
    const url = new URL(discordInviteUrl("1234567890"));
    expect(url.origin + url.pathname).toBe("https://discord.com/oauth2/authorize");
    expect(url.searchParams.get("client_id")).toBe("1234567890");
    expect(url.searchParams.get("scope")).toBe("bot applications.commands");
    const bits = BigInt(url.searchParams.get("permissions")!);
    expect(bits).toBe(Object.values(DISCORD_PERMISSIONS).reduce((a, b) => a | b, 0n));
    expect(bits & (1n << 3n)).toBe(0n); // never Administrator
  });
});
