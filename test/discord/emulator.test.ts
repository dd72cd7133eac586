import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startDiscordEmulator, type DiscordEmulator } from "../emulators/discord/index.ts";

let emulator: DiscordEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function api(emu: DiscordEmulator, method: string, path: string, body?: unknown, token: string | null = emu.token) {
  const res = await fetch(`${emu.apiUrl}/v10${path}`, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bot ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: res.status === 204 ? undefined : ((await res.json()) as Record<string, unknown>) };
}

describe("Discord emulator limits", () => {
  it("answers 401 to a request without the bot's token", async () => {
    emulator = await startDiscordEmulator();
    expect((await api(emulator, "GET", "/gateway/bot", undefined, "wrong")).status).toBe(401);
    expect((await api(emulator, "GET", "/gateway/bot", undefined, null)).status).toBe(401);
  });

  it("refuses a custom_id over 100 characters with Invalid Form Body", async () => {
    emulator = await startDiscordEmulator();
    const row = { type: 1, components: [{ type: 2, style: 1, label: "x", custom_id: "c".repeat(101) }] };
    const res = await api(emulator, "POST", `/channels/${emulator.textChannelId}/messages`, { content: "card", components: [row] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 50035, errors: { components: { 0: { components: { 0: { custom_id: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH" }] } } } } } } });
  });

  it("answers 429 with Retry-After and the X-RateLimit headers when a fault is injected", async () => {
    emulator = await startDiscordEmulator();
    emulator.failNext("createMessage", { status: 429, retryAfter: 2 });
    const res = await api(emulator, "POST", `/channels/${emulator.textChannelId}/messages`, { content: "hi" });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("2");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(res.body).toMatchObject({ retry_after: 2, global: false });
    expect((await api(emulator, "POST", `/channels/${emulator.textChannelId}/messages`, { content: "hi" })).status).toBe(200);
  });

  it("limits the edits of one channel's messages to its route bucket, with 429", async () => {
    emulator = await startDiscordEmulator({ editBucket: { limit: 5, windowMs: 5000 } });
    const posted = await api(emulator, "POST", `/channels/${emulator.textChannelId}/messages`, { content: "status 0" });
    const path = `/channels/${emulator.textChannelId}/messages/${String(posted.body!.id)}`;
    for (let i = 1; i <= 5; i++) expect((await api(emulator, "PATCH", path, { content: `status ${i}` })).status).toBe(200);
    const res = await api(emulator, "PATCH", path, { content: "one too many" });
    expect(res.status).toBe(429);
    expect(Number(res.body!.retry_after)).toBeGreaterThan(4);
  });

  it("answers Unknown interaction (10062) to a response after the deadline", async () => {
    emulator = await startDiscordEmulator({ ackDeadlineMs: 50 });
    const card = await api(emulator, "POST", `/channels/${emulator.textChannelId}/messages`, {
      content: "card", components: [{ type: 1, components: [{ type: 2, style: 1, label: "Go", custom_id: "go" }] }],
    });
    const interaction = await emulator.click({ channelId: emulator.textChannelId, messageId: String(card.body!.id), customId: "go", userId: "300000000000000001" });
    await new Promise((r) => setTimeout(r, 80));
    const late = await api(emulator, "POST", `/interactions/${interaction.id}/${interaction.token}/callback`, { type: 6 }, null);
    expect(late.status).toBe(404);
    expect(late.body).toMatchObject({ code: 10062 });
  });
});

/** Connects to the gateway as a bare client (intent Guilds) and collects every dispatch it receives. */
async function rawGateway(emu: DiscordEmulator) {
  const events: Array<{ t: string; d: Record<string, unknown> }> = [];
  const ws = new WebSocket(`${emu.gatewayUrl}?v=10&encoding=json`);
  await new Promise<void>((resolve, reject) => {
    ws.on("message", (raw) => {
      const msg = JSON.parse(String(raw)) as { op: number; t?: string; d: Record<string, unknown> };
      if (msg.op === 10) ws.send(JSON.stringify({ op: 2, d: { token: emu.token, intents: 1 << 0, properties: { os: "linux", browser: "t", device: "t" } } }));
      if (msg.op === 0) events.push({ t: msg.t!, d: msg.d });
      if (msg.t === "READY") resolve();
    });
    ws.on("error", reject);
  });
  const next = async (t: string) => {
    for (let i = 0; i < 200; i++) {
      const found = events.find((e) => e.t === t);
      if (found) return found.d;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no ${t} dispatch`);
  };
  return { next, close: () => ws.close() };
}

describe("Discord emulator: roles and members", () => {
  const ALICE = "300000000000000001";
  const BOB = "300000000000000002";

  it("lists the server's roles, the ones tests create included, and 404s another server", async () => {
    emulator = await startDiscordEmulator();
    const ops = await emulator.createRole("ops");
    const admins = await emulator.createRole("admins", { administrator: true });
    const res = await api(emulator, "GET", `/guilds/${emulator.guildId}/roles`);
    const roles = res.body as unknown as Array<{ id: string; name: string; permissions: string }>;
    expect(roles.map((r) => [r.id, r.name])).toEqual([[emulator.guildId, "@everyone"], [emulator.botRoleId, "gatehouse"], [ops, "ops"], [admins, "admins"]]);
    expect(BigInt(roles.find((r) => r.id === admins)!.permissions) & 8n).toBe(8n);
    expect(BigInt(roles.find((r) => r.id === emulator!.guildId)!.permissions) & 8n).toBe(0n);
    expect((await api(emulator, "GET", "/guilds/1/roles")).body).toMatchObject({ code: 10004 });
  });

  it("shows a member with the roles they hold, and Unknown Member for someone it never saw", async () => {
    emulator = await startDiscordEmulator();
    const ops = await emulator.createRole("ops");
    emulator.setMemberRole(ALICE, ops);
    emulator.state.user(BOB);
    const alice = await api(emulator, "GET", `/guilds/${emulator.guildId}/members/${ALICE}`);
    expect(alice.body).toMatchObject({ user: { id: ALICE }, roles: [ops] });
    expect(alice.body).not.toHaveProperty("permissions");
    expect((await api(emulator, "GET", `/guilds/${emulator.guildId}/members/${BOB}`)).body).toMatchObject({ roles: [] });
    emulator.setMemberRole(ALICE, ops, false);
    expect((await api(emulator, "GET", `/guilds/${emulator.guildId}/members/${ALICE}`)).body).toMatchObject({ roles: [] });
    const stranger = await api(emulator, "GET", `/guilds/${emulator.guildId}/members/399999999999999999`);
    expect(stranger).toMatchObject({ status: 404, body: { code: 10007, message: "Unknown Member" } });
  });

  it("announces a new role with GUILD_ROLE_CREATE and puts the clicker's roles and computed permissions in the interaction", async () => {
    emulator = await startDiscordEmulator();
    const gateway = await rawGateway(emulator);
    try {
      const admins = await emulator.createRole("admins", { administrator: true });
      expect(await gateway.next("GUILD_ROLE_CREATE")).toMatchObject({ guild_id: emulator.guildId, role: { id: admins, name: "admins" } });
      emulator.setMemberRole(ALICE, admins);
      const card = await api(emulator, "POST", `/channels/${emulator.textChannelId}/messages`, {
        content: "card", components: [{ type: 1, components: [{ type: 2, style: 1, label: "Go", custom_id: "go" }] }],
      });
      await emulator.click({ channelId: emulator.textChannelId, messageId: String(card.body!.id), customId: "go", userId: ALICE });
      const member = (await gateway.next("INTERACTION_CREATE")).member as { roles: string[]; permissions: string };
      expect(member.roles).toEqual([admins]);
      expect(BigInt(member.permissions) & 8n).toBe(8n);
    } finally {
      gateway.close();
    }
  });
});
