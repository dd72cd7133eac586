import { afterEach, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { Api, GrammyError, HttpError } from "grammy";
import { createBotApiFetch } from "../../adapters/telegram/bot-api-fetch.ts";
import { startRecordingServer, type RecordingServer } from "../support/recording-server.ts";

const TOKEN = "123456:secret-token-value";

let server: RecordingServer | undefined;

async function serve(handle: Parameters<typeof startRecordingServer>[0]) {
  server = await startRecordingServer(handle);
  return { apiRoot: server.base, seen: server.seen, connections: server.connections };
}

const json = (res: ServerResponse, status: number, value: unknown) => {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
};

afterEach(async () => {
  await server?.closeAll();
  server = undefined;
});

describe("the Bot API client's fetch", () => {
  it("posts the method's JSON and reads Telegram's answer, on one kept-alive connection", async () => {
    const { apiRoot, seen, connections } = await serve((_req, res, body) => {
      const payload = JSON.parse(body) as { chat_id: number; text: string };
      json(res, 200, { ok: true, result: { message_id: 7, date: 1, chat: { id: payload.chat_id, type: "private" }, text: payload.text } });
    });
    const api = new Api(TOKEN, { apiRoot, fetch: createBotApiFetch() });
    const first = await api.sendMessage(42, "héllo ✅");
    const second = await api.sendMessage(42, "again");
    expect(first.text).toBe("héllo ✅");
    expect(second.message_id).toBe(7);
    expect(seen[0]!.method).toBe("POST");
    expect(seen[0]!.url).toBe(`/bot${TOKEN}/sendMessage`);
    expect(seen[0]!.headers["content-type"]).toMatch(/application\/json/);
    expect(Number(seen[0]!.headers["content-length"])).toBe(Buffer.byteLength(seen[0]!.body));
    expect(JSON.parse(seen[0]!.body)).toEqual({ chat_id: 42, text: "héllo ✅" });
    expect(connections()).toBe(1);
  });

  it("turns Telegram's refusal into a GrammyError with its code and retry_after", async () => {
    const { apiRoot } = await serve((_req, res) => json(res, 429, { ok: false, error_code: 429, description: "Too Many Requests: retry after 3", parameters: { retry_after: 3 } }));
    const api = new Api(TOKEN, { apiRoot, fetch: createBotApiFetch() });
    const error = await api.sendMessage(42, "hi").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrammyError);
    expect((error as GrammyError).error_code).toBe(429);
    expect((error as GrammyError).parameters.retry_after).toBe(3);
  });

  it("fails a call whose answer is not JSON (a proxy's error page) with an HttpError", async () => {
    const { apiRoot } = await serve((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html>Bad Gateway</html>");
    });
    const api = new Api(TOKEN, { apiRoot, fetch: createBotApiFetch() });
    await expect(api.sendMessage(42, "hi")).rejects.toBeInstanceOf(HttpError);
  });

  it("gives up on a server that never answers at grammY's timeout and drops the connection", async () => {
    let closed = false;
    const { apiRoot } = await serve((req) => req.socket.on("close", () => (closed = true)));
    const api = new Api(TOKEN, { apiRoot, fetch: createBotApiFetch(), timeoutSeconds: 1 });
    const started = Date.now();
    const error = await api.sendMessage(42, "hi").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(Date.now() - started).toBeLessThan(2500);
    await new Promise((r) => setTimeout(r, 100));
    expect(closed).toBe(true);
  });

  it("stops a call when its signal aborts, mid-answer too", async () => {
    const { apiRoot } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"ok":true,');
    });
    const api = new Api(TOKEN, { apiRoot, fetch: createBotApiFetch() });
    const controller = new AbortController();
    const call = api.sendMessage(42, "hi", undefined, controller.signal as never).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 150));
    controller.abort();
    expect(await call).toBeInstanceOf(HttpError);
  });

  it("names a server it cannot reach without the token", async () => {
    const { apiRoot } = await serve(() => {});
    await server!.closeAll();
    const api = new Api(TOKEN, { apiRoot, fetch: createBotApiFetch() });
    const error = (await api.getMe().catch((e: unknown) => e)) as HttpError;
    expect(error).toBeInstanceOf(HttpError);
    expect(String(error.error)).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain("secret-token-value");
  });
});
