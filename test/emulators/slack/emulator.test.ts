import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MANIFEST_BOT_SCOPES, startSlackEmulator, type SlackEmulator } from "./index.ts";

/** Calls the emulated Web API the way any HTTP client would. */
async function call(emu: SlackEmulator, method: string, body: Record<string, unknown>, token = emu.botToken) {
  const res = await fetch(`${emu.apiUrl}${method}`, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return {
    status: res.status, retryAfter: res.headers.get("retry-after"), scopes: res.headers.get("x-oauth-scopes"),
    body: (await res.json()) as { ok: boolean; error?: string; needed?: string; provided?: string },
  };
}

const button = (action_id: string, value: string) => ({ type: "button", action_id, value, text: { type: "plain_text", text: "Go" } });

describe("Slack emulator limits the bot relies on", () => {
  let emu: SlackEmulator;
  beforeEach(async () => {
    emu = await startSlackEmulator();
  });
  afterEach(async () => {
    await emu.close();
  });

  it("refuses text over 40,000 characters with msg_too_long", async () => {
    expect((await call(emu, "chat.postMessage", { channel: "C0GENERAL", text: "x".repeat(40_001) })).body).toEqual({ ok: false, error: "msg_too_long" });
    expect((await call(emu, "chat.postMessage", { channel: "C0GENERAL", text: "x".repeat(40_000) })).body.ok).toBe(true);
  });

  it("refuses a button value over 2,000 characters and an action_id over 255", async () => {
    const post = (el: unknown) => call(emu, "chat.postMessage", { channel: "C0GENERAL", text: "t", blocks: [{ type: "actions", elements: [el] }] });
    expect((await post(button("a", "v".repeat(2001)))).body.error).toBe("invalid_blocks");
    expect((await post(button("a".repeat(256), "v"))).body.error).toBe("invalid_blocks");
    expect((await post(button("a".repeat(255), "v".repeat(2000)))).body.ok).toBe(true);
  });

  it("answers an injected rate limit with 429, Retry-After and ratelimited", async () => {
    emu.failNext("chat.postMessage", { status: 429, retryAfter: 3 });
    const r = await call(emu, "chat.postMessage", { channel: "C0GENERAL", text: "hi" });
    expect(r).toMatchObject({ status: 429, retryAfter: "3", body: { ok: false, error: "ratelimited" } });
  });

  it("limits chat.update to 50 a minute across the workspace, with 429 and Retry-After", async () => {
    const posted = await call(emu, "chat.postMessage", { channel: "C0GENERAL", text: "0" });
    const ts = (posted.body as { ts?: string }).ts;
    for (let i = 1; i <= 50; i++) expect((await call(emu, "chat.update", { channel: "C0GENERAL", ts, text: String(i) })).body.ok).toBe(true);
    const r = await call(emu, "chat.update", { channel: "C0GENERAL", ts, text: "one too many" });
    expect(r).toMatchObject({ status: 429, body: { ok: false, error: "ratelimited" } });
    expect(Number(r.retryAfter)).toBeGreaterThan(50);
  });

  it("keeps an assistant thread's status until it is cleared or the app replies in the thread", async () => {
    const parent = await call(emu, "chat.postMessage", { channel: "C0GENERAL", text: "question" });
    const thread_ts = (parent.body as { ts?: string }).ts!;
    await call(emu, "assistant.threads.setStatus", { channel_id: "C0GENERAL", thread_ts, status: "is working…" });
    expect(emu.world.threadStatus("C0GENERAL", thread_ts)).toBe("is working…");
    await call(emu, "assistant.threads.setStatus", { channel_id: "C0GENERAL", thread_ts, status: "" });
    expect(emu.world.threadStatus("C0GENERAL", thread_ts)).toBe("");
    await call(emu, "assistant.threads.setStatus", { channel_id: "C0GENERAL", thread_ts, status: "is running shell…" });
    await call(emu, "chat.postMessage", { channel: "C0GENERAL", thread_ts, text: "the answer" });
    expect(emu.world.threadStatus("C0GENERAL", thread_ts)).toBe("");
  });

  it("gives a permalink to a message, naming its thread", async () => {
    const parent = await call(emu, "chat.postMessage", { channel: "C0GENERAL", text: "question" });
    const thread_ts = (parent.body as { ts?: string }).ts!;
    const reply = await call(emu, "chat.postMessage", { channel: "C0GENERAL", thread_ts, text: "card" });
    const ts = (reply.body as { ts?: string }).ts!;
    const r = await call(emu, "chat.getPermalink", { channel: "C0GENERAL", message_ts: ts });
    expect((r.body as { permalink?: string }).permalink).toBe(`https://emulated.slack.com/archives/C0GENERAL/p${ts.replace(".", "")}?thread_ts=${thread_ts}&cid=C0GENERAL`);
    expect((await call(emu, "chat.getPermalink", { channel: "C0GENERAL", message_ts: "1.000001" })).body.error).toBe("message_not_found");
  });

  it("tells a bad token from a missing one, and an unknown channel from both", async () => {
    expect((await call(emu, "auth.test", {}, "xoxb-nope")).body.error).toBe("invalid_auth");
    expect((await call(emu, "auth.test", {}, "")).body.error).toBe("not_authed");
    expect((await call(emu, "chat.postMessage", { channel: "C0NOPE", text: "hi" })).body.error).toBe("channel_not_found");
  });

  it("opens Socket Mode only with the app-level token", async () => {
    expect((await call(emu, "apps.connections.open", {})).body.error).toBe("not_allowed_token_type");
    const r = await call(emu, "apps.connections.open", {}, emu.appToken);
    expect((r.body as { url?: string }).url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/link\/\?ticket=/);
  });

  it("names the granted scopes in x-oauth-scopes: by default every bot scope of the manifest", async () => {
    expect(MANIFEST_BOT_SCOPES).toContain("chat:write");
    const r = await call(emu, "auth.test", {});
    expect(r.scopes?.split(",")).toEqual([...MANIFEST_BOT_SCOPES]);
    expect((await call(emu, "apps.connections.open", {}, emu.appToken)).scopes).toBe("connections:write");
  });
});

describe("Slack emulator: user groups and admins", () => {
  let emu: SlackEmulator;
  beforeEach(async () => {
    emu = await startSlackEmulator();
  });
  afterEach(async () => {
    await emu.close();
  });

  type Groups = { usergroups?: Array<{ id: string; handle: string; date_delete: number; users?: string[] }>; users?: string[] };

  it("lists enabled user groups, and disabled ones (date_delete set) only with include_disabled", async () => {
    emu.world.userGroups.create({ id: "S0OPS", name: "Ops", users: ["U0ALICE"] });
    emu.world.userGroups.create({ id: "S0OLD", name: "Old", users: ["U0BOB"], disabled: true });
    const plain = (await call(emu, "usergroups.list", {})).body as Groups;
    expect(plain.usergroups?.map((g) => [g.id, g.handle, g.date_delete])).toEqual([["S0OPS", "ops", 0]]);
    expect(plain.usergroups?.[0]?.users).toBeUndefined();
    const all = (await call(emu, "usergroups.list", { include_disabled: true, include_users: true })).body as Groups;
    expect(all.usergroups?.map((g) => [g.id, g.date_delete > 0, g.users])).toEqual([["S0OPS", false, ["U0ALICE"]], ["S0OLD", true, ["U0BOB"]]]);
  });

  it("lists a group's members, and answers no_such_subteam for an unknown or disabled group", async () => {
    emu.world.userGroups.create({ id: "S0OPS", name: "Ops", users: ["U0ALICE", "U0BOB"] });
    emu.world.userGroups.create({ id: "S0OLD", name: "Old", users: ["U0BOB"], disabled: true });
    expect((await call(emu, "usergroups.users.list", { usergroup: "S0OPS" })).body).toEqual({ ok: true, users: ["U0ALICE", "U0BOB"] });
    expect((await call(emu, "usergroups.users.list", { usergroup: "S0NOPE" })).body).toEqual({ ok: false, error: "no_such_subteam" });
    expect((await call(emu, "usergroups.users.list", { usergroup: "S0OLD" })).body).toEqual({ ok: false, error: "no_such_subteam" });
    expect((await call(emu, "usergroups.users.list", { usergroup: "S0OLD", include_disabled: true })).body).toEqual({ ok: true, users: ["U0BOB"] });
    expect((await call(emu, "usergroups.users.list", {})).body.error).toBe("invalid_arguments");
  });

  it("reports workspace admins and owners in users.info", async () => {
    emu.world.setAdmin("U0ALICE", { admin: true });
    emu.world.setAdmin("U0BOB", { owner: true });
    const user = async (id: string) => ((await call(emu, "users.info", { user: id })).body as { user?: { is_admin: boolean; is_owner: boolean } }).user;
    expect(await user("U0ALICE")).toMatchObject({ is_admin: true, is_owner: false });
    expect(await user("U0BOB")).toMatchObject({ is_admin: true, is_owner: true });
    emu.world.setAdmin("U0ALICE", {});
    expect(await user("U0ALICE")).toMatchObject({ is_admin: false, is_owner: false });
  });

  it("needs usergroups:read for the user group methods, which the manifest asks for", async () => {
    expect(MANIFEST_BOT_SCOPES).toContain("usergroups:read");
    await emu.close();
    emu = await startSlackEmulator({ scopes: ["chat:write", "users:read"] });
    expect((await call(emu, "usergroups.list", {})).body).toMatchObject({ ok: false, error: "missing_scope", needed: "usergroups:read" });
    expect((await call(emu, "usergroups.users.list", { usergroup: "S0OPS" })).body).toMatchObject({ ok: false, error: "missing_scope", needed: "usergroups:read" });
  });
});

describe("Slack emulator with scopes missing", () => {
  let emu: SlackEmulator;
  afterEach(async () => {
    await emu.close();
  });

  it("reports only the granted scopes and refuses a method whose scope is missing with missing_scope", async () => {
    emu = await startSlackEmulator({ scopes: ["chat:write", "commands"] });
    expect((await call(emu, "auth.test", {})).scopes).toBe("chat:write,commands");
    const r = await call(emu, "users.info", { user: "U0ALICE" });
    expect(r.body).toEqual({ ok: false, error: "missing_scope", needed: "users:read", provided: "chat:write,commands" });
    expect((await call(emu, "conversations.replies", { channel: "DU0ALICE", ts: "1.000001" })).body.needed).toBe("im:history");
    expect((await call(emu, "chat.postMessage", { channel: "C0GENERAL", text: "hi" })).body.ok).toBe(true);
  });
});
