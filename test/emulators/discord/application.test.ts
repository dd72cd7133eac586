import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ApplicationFlags, startDiscordEmulator, type DiscordEmulator } from "./index.ts";

let emulator: DiscordEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function currentApplication(emu: DiscordEmulator, token = emu.token) {
  const res = await fetch(`${emu.apiUrl}/v10/applications/@me`, { headers: { authorization: `Bot ${token}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Identifies on the gateway asking for Message Content; resolves with the close code, or "ready". */
function identifyWithMessageContent(emu: DiscordEmulator): Promise<number | "ready"> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${emu.gatewayUrl}?v=10&encoding=json`);
    ws.on("message", (raw) => {
      const msg = JSON.parse(String(raw)) as { op: number; t?: string };
      if (msg.op === 10) ws.send(JSON.stringify({ op: 2, d: { token: emu.token, intents: (1 << 0) | (1 << 9) | (1 << 15), properties: { os: "linux", browser: "t", device: "t" } } }));
      if (msg.t === "READY") {
        resolve("ready");
        ws.close();
      }
    });
    ws.on("close", (code) => resolve(code));
    ws.on("error", reject);
  });
}

describe("Discord emulator: the current application", () => {
  it("shows the Message Content intent in the application's flags by default, and the gateway accepts it", async () => {
    emulator = await startDiscordEmulator();
    const app = await currentApplication(emulator);
    expect(app.status).toBe(200);
    expect(app.body).toMatchObject({ id: emulator.applicationId, name: "gatehouse", bot_public: true, bot_require_code_grant: false, team: null });
    expect(Number(app.body.flags) & ApplicationFlags.GatewayMessageContentLimited).toBeTruthy();
    expect(await identifyWithMessageContent(emulator)).toBe("ready");
  });

  it("leaves the flag out when the intent is off, and the gateway then closes with 4014", async () => {
    emulator = await startDiscordEmulator({ messageContentIntent: false });
    const flags = Number((await currentApplication(emulator)).body.flags);
    expect(flags & (ApplicationFlags.GatewayMessageContent | ApplicationFlags.GatewayMessageContentLimited)).toBe(0);
    expect(await identifyWithMessageContent(emulator)).toBe(4014);
    emulator.setMessageContentIntent(true);
    expect(Number((await currentApplication(emulator)).body.flags) & ApplicationFlags.GatewayMessageContentLimited).toBeTruthy();
  });

  it("answers 401 without the bot token", async () => {
    emulator = await startDiscordEmulator();
    expect((await currentApplication(emulator, "wrong")).status).toBe(401);
  });
});
