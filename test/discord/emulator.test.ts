import { afterEach, describe, expect, it } from "vitest";
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
