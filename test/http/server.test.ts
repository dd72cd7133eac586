import { afterEach, describe, expect, it } from "vitest";
import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startHttpServer, sendJson, type HttpServer } from "../../src/http/server.ts";
import { Readiness } from "../../src/http/readiness.ts";
import { mountHealthRoutes } from "../../src/http/health-routes.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { loadConfig } from "../../src/config/load.ts";
import { startBot, type Bot } from "../../src/main.ts";
import { MemoryChannel } from "../support/memory-channel.ts";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { freePort } from "../support/free-port.ts";
import { waitUntil } from "../support/wait.ts";

let server: HttpServer | undefined;
let bot: Bot | undefined;
let emu: OpenAIEmulator | undefined;
let dir: string | undefined;

afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await server?.close();
  server = undefined;
  await emu?.close();
  emu = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const listen = async (startupWaitMs?: number) =>
  (server = await startHttpServer({ port: 0, host: "127.0.0.1", log: silentLogger(), ...(startupWaitMs !== undefined ? { startupWaitMs } : {}) }));

describe("the shared HTTP server", () => {
  it("serves a mounted route until it is taken down, and tells a wrong method from an unknown path", async () => {
    const s = await listen();
    s.ready();
    const unmount = s.mount("POST", "/hook", (_req, res) => sendJson(res, 200, { got: true }));
    expect(s.localUrl).toBe(`http://127.0.0.1:${s.port}`);
    expect(await (await fetch(`${s.localUrl}/hook?x=1`, { method: "POST" })).json()).toEqual({ got: true });
    expect((await fetch(`${s.localUrl}/hook`)).status).toBe(405);
    expect((await fetch(`${s.localUrl}/elsewhere`)).status).toBe(404);
    unmount();
    expect((await fetch(`${s.localUrl}/hook`, { method: "POST" })).status).toBe(404);
  });

  it("refuses a second handler for the same path", async () => {
    const s = await listen();
    s.mount("GET", "/a", (_req, res) => res.end());
    expect(() => s.mount("GET", "/a", (_req, res) => res.end())).toThrow(/already served/);
  });

  it("holds a request for a path not mounted yet until the bot has started, then serves it", async () => {
    const s = await listen();
    const answer = fetch(`${s.localUrl}/slack/events`, { method: "POST" });
    await new Promise((r) => setTimeout(r, 100));
    s.mount("POST", "/slack/events", (_req, res) => sendJson(res, 200, { ok: true }));
    s.ready();
    expect((await answer).status).toBe(200);
  });

  it("answers 503 to such a request when the start takes too long", async () => {
    const s = await listen(50);
    expect((await fetch(`${s.localUrl}/slack/events`, { method: "POST" })).status).toBe(503);
  });

  it("answers HEAD like GET, and a handler that throws with 500", async () => {
    const s = await listen();
    s.ready();
    s.mount("GET", "/ok", (_req, res) => sendJson(res, 200, {}));
    s.mount("GET", "/boom", () => {
      throw new Error("boom");
    });
    expect((await fetch(`${s.localUrl}/ok`, { method: "HEAD" })).status).toBe(200);
    expect((await fetch(`${s.localUrl}/boom`)).status).toBe(500);
  });

  it("names PORT when the port is taken", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as { port: number }).port;
    await expect(startHttpServer({ port, host: "127.0.0.1", log: silentLogger() })).rejects.toThrow(new RegExp(`PORT ${port}: 127.0.0.1:${port} is already in use`));
    await new Promise<void>((r) => taken.close(() => r()));
  });
});

describe("readiness", () => {
  it("is ready once started, with the store answering, the model checked and every channel connected", async () => {
    const r = new Readiness(["slack"]);
    expect((await r.report()).reasons).toEqual([
      "startup: starting", "store: not open yet", "model: not checked yet", "channel:slack: not connected yet",
    ]);
    r.storeOpened(async () => undefined);
    r.modelChecked({ ok: true });
    r.channelStarted({ channel: "slack" });
    r.started();
    expect(await r.report()).toMatchObject({ status: "ready", reasons: [] });
  });

  it("follows a channel's own health, and a store that stopped answering", async () => {
    let healthy = true;
    let storeUp = true;
    const r = new Readiness(["telegram"]);
    r.storeOpened(async () => {
      if (!storeUp) throw new Error("database is closed");
    });
    r.modelChecked({ ok: true });
    r.channelStarted({ channel: "telegram", health: () => (healthy ? { ok: true } : { ok: false, detail: "409 Conflict: another process polls" }) });
    r.started();
    healthy = false;
    storeUp = false;
    expect((await r.report()).reasons).toEqual(["store: does not answer: database is closed", "channel:telegram: 409 Conflict: another process polls"]);
  });

  it("asks a model endpoint that did not answer at start again, at most every so often", async () => {
    let checks = 0;
    const r = new Readiness([], { modelRecheckMs: 0 });
    r.storeOpened(async () => undefined);
    r.started();
    r.modelChecked({ ok: false, detail: "not reachable yet" }, async () => (++checks >= 2 ? { ok: true } : { ok: false, detail: "still down" }));
    expect((await r.report()).reasons).toEqual(["model: still down"]);
    expect((await r.report()).status).toBe("ready");
    expect((await r.report()).status).toBe("ready");
    expect(checks).toBe(2);
  });

  it("is not ready while shutting down", async () => {
    const r = new Readiness([]);
    r.storeOpened(async () => undefined);
    r.modelChecked({ ok: true });
    r.started();
    r.stopping();
    expect((await r.report()).reasons).toEqual(["startup: shutting down"]);
  });

  it("answers /readyz with 503 and the reasons, /healthz with 200", async () => {
    const s = await listen();
    const r = new Readiness(["console"]);
    mountHealthRoutes(s, r);
    s.ready();
    expect((await fetch(`${s.localUrl}/healthz`)).status).toBe(200);
    const res = await fetch(`${s.localUrl}/readyz`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { reasons: string[] }).reasons).toContain("channel:console: not connected yet");
  });
});

describe("a bot with PORT set", () => {
  it("serves /healthz and /readyz whatever its channels (here only one without HTTP), and closes the port at stop", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-http-"));
    emu = await startOpenAIEmulator();
    const port = await freePort();
    const config = loadConfig({ cwd: dir, env: { OPENAI_BASE_URL: emu.baseURL, GATEHOUSE_DATA_DIR: "data", PORT: String(port), HOST: "127.0.0.1" } });
    let connect: () => void = () => {};
    const connected = new Promise<void>((resolve) => (connect = resolve));
    const channel = new MemoryChannel();
    const start = channel.start.bind(channel);
    channel.start = async (sink) => {
      await connected;
      await start(sink);
    };
    const starting = startBot(config, { adapters: [channel], log: silentLogger() });
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(async () => expect((await fetch(`${url}/healthz`).catch(() => undefined))?.status).toBe(200));
    const before = await fetch(`${url}/readyz`);
    expect(before.status).toBe(503);
    expect(((await before.json()) as { reasons: string[] }).reasons).toContain(`channel:${channel.channel}: not connected yet`);
    connect();
    bot = await starting;
    expect(bot.http?.localUrl).toBe(url);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    await bot.stop();
    bot = undefined;
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
