import { Writable } from "node:stream";
import { Api, GrammyError } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { createTelegramAdapter, type TelegramAdapter } from "../../adapters/telegram/index.ts";
import { createLogger } from "../../src/observe/logger.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";
import { RecordingSink } from "./recording-sink.ts";

let emu: TelegramEmulator | undefined;
let adapter: TelegramAdapter | undefined;
let rival: { stop(): Promise<void> } | undefined;
afterEach(async () => {
  await rival?.stop();
  rival = undefined;
  await adapter?.stop();
  adapter = undefined;
  await emu?.close();
  emu = undefined;
});

/** A logger whose JSON lines the test can read. */
function capturedLog() {
  const lines: Array<{ level: number; msg: string }> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { log: createLogger({ level: "info", destinations: [destination] }), errors: () => lines.filter((l) => l.level >= 50) };
}

async function startedAdapter(e: TelegramEmulator) {
  const { log, errors } = capturedLog();
  adapter = createTelegramAdapter({ token: e.token, apiRoot: e.apiRoot, pollTimeoutSeconds: 1, retryDelayMs: 30, log });
  const sink = new RecordingSink();
  await adapter.start(sink);
  return { a: adapter, sink, errors };
}

/** Another process polling the same bot, as a second deployment would. */
function startRivalPoller(e: TelegramEmulator): { stop(): Promise<void> } {
  const api = new Api(e.token, { apiRoot: e.apiRoot });
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await api.getUpdates({ timeout: 0 }).catch((err: unknown) => {
        if (!(err instanceof GrammyError)) throw err;
      });
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

describe("telegram adapter health", () => {
  it("is not ok before start, ok while polling, and not ok after stop", async () => {
    emu = await startTelegramEmulator();
    const a = createTelegramAdapter({ token: emu.token, apiRoot: emu.apiRoot, pollTimeoutSeconds: 1 });
    adapter = a;
    expect(a.health().ok).toBe(false);
    await a.start(new RecordingSink());
    expect(a.health()).toEqual({ ok: true });
    await a.stop();
    expect(a.health().ok).toBe(false);
  });

  it("turns unhealthy and logs an error naming the other poller when another process polls the same bot", async () => {
    emu = await startTelegramEmulator();
    const { a, sink, errors } = await startedAdapter(emu);
    rival = startRivalPoller(emu);
    await sink.until(() => !a.health().ok, 3000, "the adapter to report the conflict");
    expect(a.health().detail).toMatch(/409 Conflict.*Another process is polling with the same TELEGRAM_BOT_TOKEN.*Stop the other instance/);
    expect(errors().map((l) => l.msg)).toEqual([expect.stringMatching(/polling stopped.*Another process is polling.*Stop the other instance/)]);
  });

  it("names the webhook as the cause when one is set while the adapter polls", async () => {
    emu = await startTelegramEmulator();
    const { a, sink, errors } = await startedAdapter(emu);
    // Nothing listens on port 9: the emulator's pushes fail, which is all this test needs.
    await new Api(emu.token, { apiRoot: emu.apiRoot }).setWebhook("http://127.0.0.1:9/elsewhere");
    await sink.until(() => !a.health().ok, 3000, "the adapter to report the webhook");
    expect(a.health().detail).toMatch(/A webhook is set for this TELEGRAM_BOT_TOKEN.*TELEGRAM_WEBHOOK_URL/);
    expect(errors()).toHaveLength(1);
  });

  it("turns unhealthy and says to replace the token when Telegram revokes it mid-run", async () => {
    emu = await startTelegramEmulator();
    const { a, sink, errors } = await startedAdapter(emu);
    emu.failNext("getUpdates", { status: 401, description: "Unauthorized" });
    await sink.until(() => !a.health().ok, 3000, "the adapter to report the revoked token");
    expect(a.health().detail).toMatch(/revoked or regenerated in @BotFather.*TELEGRAM_BOT_TOKEN/);
    expect(errors()[0]!.msg).toMatch(/401 Unauthorized/);
    expect(errors()[0]!.msg).not.toContain(emu.token);
  });
});
