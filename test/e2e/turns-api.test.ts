import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";
import { freePort } from "../support/free-port.ts";
import { waitUntil } from "../support/wait.ts";
import { startBotProcess, type BotProcess } from "./process.ts";

const CHAT = -100900;
const TOKEN = "ci-token-0123456789abcdef";

let model: OpenAIEmulator;
let telegram: TelegramEmulator;
let bot: BotProcess | undefined;

afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await telegram?.close();
  await model?.close();
});

async function startWithApi(): Promise<string> {
  model = await startOpenAIEmulator();
  model.setFallback((req) => {
    const last = (req.body.messages as Array<{ role: string; content: string }>).at(-1)!;
    return { text: `deploy check: ${last.content.includes("check the deploy") ? "green" : "unknown"}` };
  });
  telegram = await startTelegramEmulator();
  telegram.state.rememberChat({ id: CHAT, type: "group", title: "alerts" });
  const port = await freePort();
  bot = startBotProcess({
    TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL,
    PORT: String(port), HOST: "127.0.0.1", GATEHOUSE_API_TOKEN: TOKEN,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(async () => expect((await fetch(`${base}/readyz`).catch(() => undefined))?.status).toBe(200), { timeout: 20_000 });
  return base;
}

const post = (base: string, body: unknown, token: string | null = TOKEN) =>
  fetch(`${base}/v1/turns`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

describe("POST /v1/turns", () => {
  it("refuses a call without the token, or with a wrong one, and runs nothing", async () => {
    const base = await startWithApi();
    expect((await post(base, { prompt: "check the deploy", deliverTo: `telegram:${CHAT}` }, null)).status).toBe(401);
    expect((await post(base, { prompt: "check the deploy", deliverTo: `telegram:${CHAT}` }, "wrong-token-0123456789")).status).toBe(401);
    await new Promise((r) => setTimeout(r, 500));
    expect(model.requests).toHaveLength(0);
  });

  it("runs a turn and, with wait, answers with it; the answer is also delivered to the chat", async () => {
    const base = await startWithApi();
    const res = await post(base, { prompt: "check the deploy", deliverTo: `telegram:${CHAT}`, name: "ci", wait: true });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; status: string; answer: string };
    expect(body).toMatchObject({ status: "done", answer: "deploy check: green" });
    await waitUntil(() => expect(telegram.botMessages(CHAT).map((m) => m.text).join("\n")).toContain("deploy check: green"), { timeout: 10_000 });
    const polled = await fetch(`${base}/v1/turns/${body.id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await polled.json()).toMatchObject({ id: body.id, status: "done" });
  });

  it("answers 202 with a turn id to poll without wait, and 400 for a bad request", async () => {
    const base = await startWithApi();
    const res = await post(base, { prompt: "check the deploy", deliverTo: `telegram:${CHAT}` });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    await waitUntil(async () => {
      const polled = await fetch(`${base}/v1/turns/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(await polled.json()).toMatchObject({ status: "done", answer: "deploy check: green" });
    }, { timeout: 15_000 });
    const bad = await post(base, { prompt: "", deliverTo: "nowhere" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/invalid request/);
    expect((await post(base, { prompt: "x", deliverTo: "slack:C1" })).status).toBe(400);
    const huge = await post(base, { prompt: "x".repeat(100_000), deliverTo: `telegram:${CHAT}` });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toEqual({ error: "the body is larger than 65536 bytes" });
  });

  it("runs a prompt that starts with '/' as a prompt, refuses a blank one, and says when the answer could not be delivered", async () => {
    const base = await startWithApi();
    const slash = await post(base, { prompt: "/status", deliverTo: `telegram:${CHAT}`, wait: true });
    expect(slash.status).toBe(200);
    expect(await slash.json()).toMatchObject({ status: "done", answer: "deploy check: unknown", delivered: true });
    expect((model.requests.at(-1)!.body.messages as Array<{ content: string }>).at(-1)!.content).toMatch(/\] \/status$/);

    const blank = await post(base, { prompt: "   ", deliverTo: `telegram:${CHAT}` });
    expect(blank.status).toBe(400);
    expect(((await blank.json()) as { error: string }).error).toBe("invalid request: prompt: must not be blank");

    const lost = await post(base, { prompt: "check the deploy", deliverTo: "telegram:-999999", wait: true });
    expect(lost.status).toBe(200);
    expect(await lost.json()).toMatchObject({ status: "done", answer: "deploy check: green", delivered: false });
  });
});
