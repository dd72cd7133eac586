import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createTelegramAdapter, type TelegramAdapter } from "../../adapters/telegram/index.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";
import { memoryOffsetStore } from "./harness.ts";
import { RecordingSink } from "./recording-sink.ts";

let emu: TelegramEmulator | undefined;
const adapters: TelegramAdapter[] = [];
afterEach(async () => {
  for (const a of adapters.splice(0)) await a.stop();
  await emu?.close();
  emu = undefined;
});

function adapter(e: TelegramEmulator, extra: Partial<Parameters<typeof createTelegramAdapter>[0]> = {}): TelegramAdapter {
  const a = createTelegramAdapter({ token: e.token, apiRoot: e.apiRoot, pollTimeoutSeconds: 1, retryDelayMs: 30, ...extra });
  adapters.push(a);
  return a;
}

describe("telegram adapter lifecycle", () => {
  it("refuses to start with a wrong token and names TELEGRAM_BOT_TOKEN without leaking it", async () => {
    emu = await startTelegramEmulator();
    const wrong = "999999:WRONG-token-value-that-is-long-enough-xx";
    const err = (await adapter(emu, { token: wrong }).start(new RecordingSink()).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/TELEGRAM_BOT_TOKEN/);
    expect(err.message).toMatch(/401/);
    expect(err.message).not.toContain(wrong);
  });

  it("says which setting to check when the Bot API cannot be reached", async () => {
    emu = await startTelegramEmulator();
    const deadRoot = emu.apiRoot;
    await emu.close();
    emu = undefined;
    const a = createTelegramAdapter({ token: "123456:TEST-token", apiRoot: deadRoot });
    await expect(a.start(new RecordingSink())).rejects.toThrow(/Could not reach the Telegram Bot API.*TELEGRAM_API_ROOT/);
  });

  it("refuses to start without a token", async () => {
    emu = await startTelegramEmulator();
    await expect(adapter(emu, { token: "" }).start(new RecordingSink())).rejects.toThrow(/TELEGRAM_BOT_TOKEN is empty/);
  });

  it("registers its commands at start, so that they show in the command menu", async () => {
    emu = await startTelegramEmulator();
    await adapter(emu).start(new RecordingSink());
    const [call] = emu.callsOf("setMyCommands");
    expect((call!.params.commands as Array<{ command: string }>).map((c) => c.command)).toEqual(["stop", "status", "new", "compact", "always", "help"]);
  });

  it("reports a 409 conflict at start as another instance, without retrying", async () => {
    emu = await startTelegramEmulator();
    emu.failNext("getUpdates", { status: 409, description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running" });
    await expect(adapter(emu).start(new RecordingSink())).rejects.toThrow(/409 Conflict.*Another process is polling/);
    expect(emu.callsOf("getUpdates")).toHaveLength(1);
  });

  it("stops polling after repeated conflicts instead of retrying forever", async () => {
    emu = await startTelegramEmulator();
    const a = adapter(emu);
    await a.start(new RecordingSink());
    emu.failNext("getUpdates", { status: 409, description: "Conflict: terminated by other getUpdates request" }, 10);
    const sink = new RecordingSink();
    await sink.until(() => emu!.callsOf("getUpdates").filter((c) => c.status === 409).length >= 3, 3000, "three conflicts");
    await new Promise((r) => setTimeout(r, 300));
    expect(emu.callsOf("getUpdates").filter((c) => c.status === 409)).toHaveLength(3);
  });

  it("neither loses nor repeats an update across a restart while one is in flight", async () => {
    emu = await startTelegramEmulator();
    const offsets = memoryOffsetStore();
    const first = new RecordingSink();
    first.hold = (env) => (env.text === "second" ? new Promise(() => {}) : Promise.resolve());
    const a = adapter(emu, { offsetStore: offsets });
    await a.start(first);
    emu.userMessage({ text: "first" });
    await first.waitForEnvelopes(1);
    emu.userMessage({ text: "second" });
    await first.waitForEnvelopes(2);
    await a.stop();

    const second = new RecordingSink();
    const b = adapter(emu, { offsetStore: offsets });
    await b.start(second);
    emu.userMessage({ text: "third" });
    await second.waitForEnvelopes(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(first.envelopes.map((e) => e.text)).toEqual(["first", "second"]);
    expect(second.envelopes.map((e) => e.text)).toEqual(["second", "third"]);
    expect(second.envelopes[0]!.id).toBe(first.envelopes[1]!.id);
  });

  it("moves the saved offset only past updates whose handling finished", async () => {
    emu = await startTelegramEmulator();
    const offsets = memoryOffsetStore();
    const sink = new RecordingSink();
    let release: () => void = () => {};
    sink.hold = (env) => (env.text === "slow" ? new Promise<void>((r) => (release = r)) : Promise.resolve());
    await adapter(emu, { offsetStore: offsets }).start(sink);
    const slow = emu.userMessage({ text: "slow", from: { id: 1, first_name: "A" } });
    const fast = emu.userMessage({ text: "fast", from: { id: 2, first_name: "B" } });
    await sink.waitForEnvelopes(2);
    // Offset writes are batched (a quarter second): the fast update's finish is written, but not past the slow one.
    await sink.until(() => offsets.value === slow.update.update_id, 2000, "the offset to reach the slow update");
    await new Promise((r) => setTimeout(r, 400));
    expect(offsets.value).toBe(slow.update.update_id);
    release();
    await sink.until(() => offsets.value === fast.update.update_id + 1, 2000, "the offset to pass both updates");
  });

  describe("webhook mode", () => {
    /** A port that was free a moment ago, so the webhook URL can be known before the receiver starts. */
    async function freePort(): Promise<number> {
      const server = createServer();
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((r) => server.close(() => r()));
      return port;
    }

    async function webhookAdapter(e: TelegramEmulator, sink: RecordingSink) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/telegram/hook`;
      const a = adapter(e, { webhook: { url, secret: "s3cret-value_1", listen: { host: "127.0.0.1", port } } });
      await a.start(sink);
      return { a, url };
    }

    it("registers the webhook with its secret and receives updates through it", async () => {
      emu = await startTelegramEmulator();
      const sink = new RecordingSink();
      await webhookAdapter(emu, sink);
      expect(emu.callsOf("setWebhook")[0]!.params).toMatchObject({ secret_token: "s3cret-value_1" });
      expect(emu.callsOf("getUpdates")).toHaveLength(0);
      const posted = emu.userMessage({ text: "via webhook" });
      await posted.delivered;
      const [env] = await sink.waitForEnvelopes(1);
      expect(env!.text).toBe("via webhook");
    });

    it("rejects a webhook request with a wrong secret with 401 and does not process it", async () => {
      emu = await startTelegramEmulator();
      const sink = new RecordingSink();
      const { url } = await webhookAdapter(emu, sink);
      const update = { update_id: 1, message: { message_id: 1, date: 0, chat: { id: 5, type: "private" }, from: { id: 5, is_bot: false, first_name: "Eve" }, text: "forged" } };
      for (const headers of [{ "x-telegram-bot-api-secret-token": "wrong" }, {}]) {
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(update) });
        expect(res.status).toBe(401);
      }
      await new Promise((r) => setTimeout(r, 100));
      expect(sink.envelopes).toHaveLength(0);
    });

    it("refuses to start webhook mode without a secret", async () => {
      emu = await startTelegramEmulator();
      const a = adapter(emu, { webhook: { url: "https://bot.example.com/hook", secret: "" } });
      await expect(a.start(new RecordingSink())).rejects.toThrow(/TELEGRAM_WEBHOOK_SECRET/);
    });
  });
});
