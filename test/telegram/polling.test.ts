/**
 * The getUpdates loop under a burst: the real grammY Api against the Telegram emulator, which
 * serves at most 100 updates a page and serves again everything at or above the offset asked with.
 */
import { Bot } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { UpdatePoller } from "../../adapters/telegram/polling.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";

let emu: TelegramEmulator | undefined;
let poller: UpdatePoller | undefined;
afterEach(async () => {
  await poller?.stop();
  poller = undefined;
  await emu?.close();
  emu = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idsOf = (result: unknown) => ((result as { result?: Array<{ update_id: number }> })?.result ?? []).map((u) => u.update_id);

describe("telegram update polling", () => {
  it("takes a burst page by page, polling again once a page is handled rather than for the same page", async () => {
    emu = await startTelegramEmulator();
    const burst = Array.from({ length: 250 }, (_, i) => emu!.userMessage({ text: `message ${i}`, from: { id: 1000 + i, first_name: `U${i}` } }).update.update_id);
    const handled: number[] = [];
    const api = new Bot(emu.token, { client: { apiRoot: emu.apiRoot } }).api;
    poller = new UpdatePoller({
      api, log: silentLogger(), pollTimeoutSeconds: 1,
      // Long enough that only the end of a page's handling can start the next poll.
      busyPollMs: 5_000,
      onFatal: (error) => {
        throw error;
      },
      // Handling takes a while (the gateway records the message first), as under load.
      handle: async (update) => {
        await sleep(20 + Math.random() * 30);
        handled.push((update as { update_id: number }).update_id);
      },
    });
    const started = Date.now();
    await poller.start();
    while (handled.length < burst.length && Date.now() - started < 10_000) await sleep(20);

    expect([...handled].sort((a, b) => a - b)).toEqual(burst);
    // Every page brought new updates: none was asked for again while its updates were being handled.
    const pages = emu.callsOf("getUpdates").map((c) => idsOf(c.response)).filter((ids) => ids.length > 0);
    let newest = -1;
    const repeated = pages.filter((ids) => {
      const fresh = ids.some((id) => id > newest);
      newest = Math.max(newest, ...ids);
      return !fresh;
    });
    expect(repeated).toEqual([]);
    expect(pages).toHaveLength(3);
    // Three pages, each handled in about 50 ms: nowhere near a busy-poll pause.
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it("still takes updates that arrive while an update is stuck in flight", async () => {
    emu = await startTelegramEmulator();
    const handled: string[] = [];
    let release: () => void = () => {};
    const api = new Bot(emu.token, { client: { apiRoot: emu.apiRoot } }).api;
    poller = new UpdatePoller({
      api, log: silentLogger(), pollTimeoutSeconds: 1, busyPollMs: 100,
      onFatal: (error) => {
        throw error;
      },
      handle: async (update) => {
        const text = (update as { message?: { text?: string } }).message?.text ?? "";
        if (text === "slow") await new Promise<void>((r) => (release = r));
        handled.push(text);
      },
    });
    await poller.start();
    emu.userMessage({ text: "slow", from: { id: 1, first_name: "A" } });
    await sleep(300);
    emu.userMessage({ text: "fast", from: { id: 2, first_name: "B" } });
    for (let waited = 0; !handled.includes("fast") && waited < 3_000; waited += 20) await sleep(20);
    expect(handled).toEqual(["fast"]);
    release();
    for (let waited = 0; handled.length < 2 && waited < 3_000; waited += 20) await sleep(20);
    expect(handled).toEqual(["fast", "slow"]);
  });
});
