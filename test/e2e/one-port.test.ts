import { afterEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";
import { freePort } from "../support/free-port.ts";
import { waitUntil } from "../support/wait.ts";
import { startBotProcess, type BotProcess } from "./process.ts";

const CHANNEL = "C0ONEPORT";
const SIGNING_SECRET = "one-port-signing-secret";

let model: OpenAIEmulator;
let slack: SlackEmulator;
let telegram: TelegramEmulator;
let gate: GatedModel | undefined;
let bot: BotProcess;

afterEach(async () => {
  await bot?.stop();
  await gate?.close();
  gate = undefined;
  await slack?.close();
  await telegram?.close();
  await model?.close();
});

interface GatedModel {
  baseURL: string;
  /** Lets the held `GET /models` (the bot's endpoint check at start) through. */
  open(): void;
  close(): Promise<void>;
}

/**
 * The model emulator behind a door: `GET /v1/models` waits until `open()`, so the bot stays in its
 * start-up (before its channels connect) for as long as the test needs; everything else passes.
 */
async function gatedModel(target: OpenAIEmulator): Promise<GatedModel> {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method === "GET" && req.url?.endsWith("/models")) await opened;
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const upstream = await fetch(`${target.baseURL.replace(/\/v1$/, "")}${req.url}`, {
        method: req.method,
        headers: { "content-type": req.headers["content-type"] ?? "application/json" },
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      });
      res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
      for await (const chunk of upstream.body ?? []) res.write(chunk);
      res.end();
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    open: () => open(),
    close: () =>
      new Promise<void>((resolve) => {
        open();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const get = async (url: string) => {
  const res = await fetch(url).catch(() => undefined);
  return res ? { status: res.status, body: (await res.json()) as Record<string, unknown> } : undefined;
};

describe("one HTTP server on PORT", () => {
  it("answers /healthz at once, /readyz 503 until the channels connect and 200 after, and takes Slack events and Telegram updates on the same port", async () => {
    model = await startOpenAIEmulator();
    model.setFallback((request) => {
      const messages = request.body.messages as Array<{ role: string; content: string }>;
      return { text: `pong: ${messages.at(-1)!.content}` };
    });
    gate = await gatedModel(model);
    slack = await startSlackEmulator();
    slack.world.channels.add(CHANNEL);
    telegram = await startTelegramEmulator();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    bot = startBotProcess({
      PORT: String(port), HOST: "127.0.0.1", OPENAI_BASE_URL: gate.baseURL,
      SLACK_BOT_TOKEN: slack.botToken, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.apiUrl,
      TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot,
      TELEGRAM_WEBHOOK_URL: `${base}/telegram/hook`, TELEGRAM_WEBHOOK_SECRET: "one-port-hook-secret",
    });

    // Alive while it starts; not ready: the model check at start is still waiting, no channel is connected.
    const health = await waitUntil(async () => {
      const answer = await get(`${base}/healthz`);
      expect(answer?.status).toBe(200);
      return answer!;
    }, { timeout: 20_000 });
    expect(health.body).toMatchObject({ status: "ok" });
    const before = await get(`${base}/readyz`);
    expect(before?.status).toBe(503);
    expect(before?.body.status).toBe("not ready");
    expect(before?.body.reasons).toEqual(expect.arrayContaining(["channel:slack: not connected yet", "channel:telegram: not connected yet"]));

    gate.open();
    const after = await waitUntil(async () => {
      const answer = await get(`${base}/readyz`);
      expect(answer?.status).toBe(200);
      return answer!;
    }, { timeout: 20_000 });
    expect(after.body).toMatchObject({ status: "ready", reasons: [], checks: { store: { ok: true }, model: { ok: true }, "channel:slack": { ok: true }, "channel:telegram": { ok: true } } });

    // Slack's Events API on the shared port.
    slack.useHttp({ url: `${base}/slack/events`, signingSecret: SIGNING_SECRET });
    const { message, deliveries } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: `<@${slack.botUserId}> ping slack` });
    expect(deliveries.map((d) => d.status)).toContain(200);
    await waitUntil(() => expect(slack.messagesIn(CHANNEL, message.ts).map((m) => m.text).join("\n")).toMatch(/pong: .*ping slack/), { timeout: 15_000 });

    // The Telegram webhook on the same port, at its URL's path.
    expect(telegram.callsOf("setWebhook")[0]?.params).toMatchObject({ url: `${base}/telegram/hook` });
    const sent = telegram.userMessage({ text: "ping telegram", from: { id: 4242, first_name: "Tess" } });
    await sent.delivered;
    await waitUntil(() => expect(telegram.botMessages(4242).map((m) => m.text).join("\n")).toMatch(/pong: .*ping telegram/), { timeout: 15_000 });
    expect(telegram.callsOf("getUpdates")).toHaveLength(0);

    // A wrong secret is refused there, and an unknown path is a 404 once the bot has started.
    const forged = await fetch(`${base}/telegram/hook`, { method: "POST", headers: { "x-telegram-bot-api-secret-token": "nope" }, body: "{}" });
    expect(forged.status).toBe(401);
    expect((await fetch(`${base}/nothing-here`)).status).toBe(404);
    expect(await bot.stop()).toBe(0);
  }, 60_000);
});
