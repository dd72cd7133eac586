import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";
import { startBotProcess, type BotProcess } from "./process.ts";
import { waitUntil } from "../support/wait.ts";

let model: OpenAIEmulator;
let telegram: TelegramEmulator;
const bots: BotProcess[] = [];

afterEach(async () => {
  for (const b of bots.splice(0)) await b.stop();
  await telegram?.close();
  await model?.close();
});

/** A data folder whose config lets http_fetch reach 127.0.0.1 without a card, and the env of a bot kept there. */
function fetchingBot(prefix: string, http: Record<string, unknown> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const config = path.join(dir, "gatehouse.json");
  writeFileSync(config, JSON.stringify({ http: { allowHosts: ["127.0.0.1"], ...http } }));
  return { dir, env: { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL, GATEHOUSE_CONFIG: config } };
}

describe("a crash while an approval waits", () => {
  for (const signal of ["SIGKILL", "SIGTERM"] as const) {
    it(`after ${signal} and a restart, a click on the old card runs the tool once and the answer lands in the chat`, async () => {
      model = await startOpenAIEmulator();
      telegram = await startTelegramEmulator();
      model.script({ toolCalls: [{ name: "write_file", arguments: '{"path":"crash.txt","content":"x"}' }] }, { text: "crash.txt is written" });
      const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
      const first = startBotProcess(env, { keepDataDir: true });
      bots.push(first);
      await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
      await telegram.userMessage({ text: "write crash.txt", from: { id: 5151 } }).delivered;
      await waitUntil(() => expect(telegram.botMessages(5151).some((m) => m.reply_markup?.inline_keyboard?.length)).toBe(true), { timeout: 10_000 });
      const card = telegram.botMessages(5151).find((m) => m.reply_markup?.inline_keyboard?.length)!;
      const approve = card.reply_markup!.inline_keyboard.flat()[0]!.callback_data!;

      first.child.kill(signal);
      await new Promise((r) => first.child.once("exit", r));
      const second = startBotProcess(env, { dataDir: first.dataDir });
      bots.push(second);
      await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(2), { timeout: 15_000 });
      expect(telegram.botMessages(5151).find((m) => m.message_id === card.message_id)!.reply_markup?.inline_keyboard?.length).toBeTruthy();

      // An accepted click is answered without an alert; the card shows the decision.
      await telegram.clickButton({ chatId: 5151, messageId: card.message_id, data: approve, from: { id: 5151 } }).answered;
      await waitUntil(() => expect(telegram.botMessages(5151).map((m) => m.text).join("\n")).toMatch(/crash\.txt is written/), { timeout: 15_000 });
      expect(readFileSync(path.join(first.dataDir, "data", "workspace", "crash.txt"), "utf8")).toBe("x");
      const again = await telegram.clickButton({ chatId: 5151, messageId: card.message_id, data: approve, from: { id: 5151 } }).answered;
      expect(JSON.stringify(again)).toMatch(/Already decided/);
      expect(telegram.botMessages(5151).filter((m) => /crash\.txt is written/.test(m.text ?? ""))).toHaveLength(1);
      expect(telegram.botMessages(5151).map((m) => m.text).join("\n")).not.toMatch(/not finished/);
      // The task's status message went on where it was: one, with the decision and the summary.
      await waitUntil(() => expect(telegram.botMessages(5151).filter((m) => /1 step in/.test(m.text ?? ""))).toHaveLength(1));
      expect(telegram.botMessages(5151).find((m) => /1 step in/.test(m.text ?? ""))!.text).toMatch(/approved by/);
      expect(telegram.botMessages(5151).some((m) => /waiting for approval/.test(m.text ?? ""))).toBe(false);
      rmSync(first.dataDir, { recursive: true, force: true });
    });
  }

  /**
   * A bot whose model writes `<file>` when asked to ("write <file>", then "<file> is written") and
   * otherwise echoes the question ("you asked: …"), with a card for that write waiting in `chatId`.
   */
  async function cardWaiting(chatId: number, file: string) {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.setFallback((r) => {
      const last = (r.body.messages as Array<{ role: string; content?: string }>).at(-1);
      if (last?.role === "tool") return { text: `${file} is written` };
      if (last?.content?.includes(`write ${file}`)) return { toolCalls: [{ name: "write_file", arguments: JSON.stringify({ path: file, content: "x" }) }] };
      return { text: `you asked: ${last?.content ?? ""}` };
    });
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    bots.push(first);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    await telegram.userMessage({ text: `write ${file}`, from: { id: chatId } }).delivered;
    await waitUntil(() => expect(telegram.botMessages(chatId).some((m) => m.reply_markup?.inline_keyboard?.length)).toBe(true), { timeout: 10_000 });
    const card = telegram.botMessages(chatId).find((m) => m.reply_markup?.inline_keyboard?.length)!;
    const texts = () => telegram.botMessages(chatId).map((m) => m.text ?? "");
    const approve = () => telegram.clickButton({ chatId, messageId: card.message_id, data: card.reply_markup!.inline_keyboard.flat()[0]!.callback_data!, from: { id: chatId } }).answered;
    const stopAndRestart = async (sentWhileDown?: string) => {
      first.child.kill("SIGTERM");
      await new Promise((r) => first.child.once("exit", r));
      // Sent while no bot polls: Telegram keeps it for the next getUpdates.
      const followUp = sentWhileDown ? telegram.userMessage({ text: sentWhileDown, from: { id: chatId } }) : undefined;
      bots.push(startBotProcess(env, { dataDir: first.dataDir }));
      await (followUp ? followUp.delivered : waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(2), { timeout: 15_000 }));
    };
    /** Whether a message matching `before` was posted, and before one matching `then`. */
    const inOrder = (before: RegExp, then: RegExp) => {
      const at = (pattern: RegExp) => texts().findIndex((t) => pattern.test(t));
      return at(before) >= 0 && at(before) < at(then);
    };
    return { dataDir: first.dataDir, card, texts, approve, stopAndRestart, inOrder };
  }

  it("a reason asked for with \"Deny with reason…\" before a SIGTERM is taken from the clicker's reply after the restart", async () => {
    const bot = await cardWaiting(8181, "friday.txt");
    const button = bot.card.reply_markup!.inline_keyboard.flat().find((b) => /reason/i.test(b.text))!;
    await telegram.clickButton({ chatId: 8181, messageId: bot.card.message_id, data: button.callback_data!, from: { id: 8181 } }).answered;
    await waitUntil(() => expect(telegram.botMessages(8181).some((m) => m.forceReply)).toBe(true), { timeout: 10_000 });
    const prompt = telegram.botMessages(8181).find((m) => m.forceReply)!;
    await bot.stopAndRestart();
    await telegram.userMessage({ text: "not on a Friday", from: { id: 8181 }, replyToMessageId: prompt.message_id }).delivered;
    // The model hears the reason in the denied call's result; the file is never written.
    await waitUntil(() => expect(JSON.stringify(model.requests.at(-1)?.body.messages ?? [])).toMatch(/not on a Friday/), { timeout: 15_000 });
    await waitUntil(() => expect(bot.texts().join("\n")).toMatch(/friday\.txt is written/), { timeout: 15_000 });
    expect(existsSync(path.join(bot.dataDir, "data", "workspace", "friday.txt"))).toBe(false);
    expect(bot.texts().join("\n")).not.toMatch(/I restarted after asking for this reason/);
    expect(bot.texts().join("\n")).not.toMatch(/you asked: not on a Friday/);
    rmSync(bot.dataDir, { recursive: true, force: true });
  });

  it("a message queued behind a waiting card at SIGTERM is answered after the restart, after the card's turn", async () => {
    const bot = await cardWaiting(6161, "deploy.txt");
    await telegram.userMessage({ text: "and the weather", from: { id: 6161 } }).delivered;
    await waitUntil(() => expect(bot.texts().join("\n")).toMatch(/Queued/), { timeout: 10_000 });
    await bot.stopAndRestart();
    expect(bot.texts().join("\n")).toMatch(/I'll answer this as soon as I'm back/);
    await bot.approve();
    await waitUntil(() => expect(bot.texts().join("\n")).toMatch(/you asked: and the weather/), { timeout: 15_000 });
    expect(bot.inOrder(/deploy\.txt is written/, /you asked: and the weather/)).toBe(true);
    expect(bot.texts().join("\n")).not.toMatch(/send it again|was not finished/);
    rmSync(bot.dataDir, { recursive: true, force: true });
  });

  it("a message sent while the bot was down, in a chat whose turn is parked, waits for that turn", async () => {
    const bot = await cardWaiting(7171, "notes.txt");
    await bot.stopAndRestart("and the weather");
    await waitUntil(() => expect(bot.texts().join("\n")).toMatch(/Queued/), { timeout: 15_000 });
    expect(bot.texts().join("\n")).not.toMatch(/you asked: and the weather/);
    await bot.approve();
    await waitUntil(() => expect(bot.texts().join("\n")).toMatch(/you asked: and the weather/), { timeout: 15_000 });
    expect(bot.inOrder(/notes\.txt is written/, /you asked: and the weather/)).toBe(true);
    rmSync(bot.dataDir, { recursive: true, force: true });
  });
});

describe("a crash while a message is being answered", () => {
  it("a tool running at SIGKILL is reported interrupted after the restart and never run twice", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    let hits = 0;
    const slow = createServer(() => void hits++);
    await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/report`;
    model.script({ toolCalls: [{ name: "http_fetch", arguments: JSON.stringify({ url }) }] }, { text: "the fetch did not finish" });
    const { dir, env } = fetchingBot("gh-e2e-kill-", { timeoutMs: 60_000 });
    try {
      const first = startBotProcess(env, { dataDir: dir, keepDataDir: true });
      bots.push(first);
      await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
      await telegram.userMessage({ text: "fetch the report", from: { id: 8484 } }).delivered;
      await waitUntil(() => expect(hits).toBe(1), { timeout: 10_000 });
      // A moment for the status message to be posted and kept.
      await new Promise((r) => setTimeout(r, 1500));
      first.child.kill("SIGKILL");
      await new Promise((r) => first.child.once("exit", r));

      const second = startBotProcess(env, { dataDir: dir, keepDataDir: true });
      bots.push(second);
      await waitUntil(() => expect(telegram.botMessages(8484).map((m) => m.text).join("\n")).toMatch(/the fetch did not finish/), { timeout: 15_000 });
      const results = (model.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "tool");
      expect(results.at(-1)!.content).toMatch(/interrupted by a restart/);
      expect(hits).toBe(1);
      // The turn went on in the status message the killed process had posted: one, closed with the cut-off step.
      await waitUntil(() => expect(telegram.botMessages(8484).map((m) => m.text ?? "").filter((t) => /http_fetch/.test(t))).toEqual([expect.stringMatching(/⏹ http_fetch: not finished\n.*steps? in/)]));
    } finally {
      slow.closeAllConnections();
      slow.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("after a crash before the turn's first checkpoint, the restarted bot starts the message over and answers it once", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script({ hang: true }, { text: "the incident summary" });
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    bots.push(first);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    await telegram.userMessage({ text: "summarize the incident", from: { id: 6262 } }).delivered;
    await waitUntil(() => expect(model.requests.length).toBe(1), { timeout: 10_000 });
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));

    const second = startBotProcess(env, { dataDir: first.dataDir });
    bots.push(second);
    const texts = () => telegram.botMessages(6262).map((m) => m.text);
    await waitUntil(() => expect(texts()).toContain("the incident summary"), { timeout: 15_000 });
    expect(texts().join("\n")).toMatch(/I restarted while working on this, so I'm starting it over/);
    expect(texts().join("\n")).not.toMatch(/not finished|send it again/);
    await new Promise((r) => setTimeout(r, 500));
    expect(texts().filter((t) => t === "the incident summary")).toHaveLength(1);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]!.body.messages).toContainEqual(expect.objectContaining({ role: "user", content: "summarize the incident" }));
    rmSync(first.dataDir, { recursive: true, force: true });
  });

  it("a message that starts over after a crash closes the status message the killed process had posted, saying so in it", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    const time = { toolCalls: [{ name: "current_time", arguments: '{"timezone":"UTC"}' }] };
    model.script(time, { hang: true }, time, { text: "it is noon" });
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    bots.push(first);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    await telegram.userMessage({ text: "what time is it", from: { id: 6565 } }).delivered;
    // The read ran (no checkpoint: it may simply run again) and the model is asked again when the bot dies.
    await waitUntil(() => expect(telegram.botMessages(6565).some((m) => /✅ current_time/.test(m.text ?? ""))).toBe(true), { timeout: 10_000 });
    await waitUntil(() => expect(model.requests.length).toBe(2), { timeout: 10_000 });
    // The status message is kept a moment after its last step ended.
    await new Promise((r) => setTimeout(r, 1500));
    const status = telegram.botMessages(6565).find((m) => /current_time/.test(m.text ?? ""))!;
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));

    const second = startBotProcess(env, { dataDir: first.dataDir });
    bots.push(second);
    const texts = () => telegram.botMessages(6565).map((m) => m.text ?? "");
    await waitUntil(() => expect(texts()).toContain("it is noon"), { timeout: 15_000 });
    await waitUntil(() => expect(telegram.botMessages(6565).find((m) => m.message_id === status.message_id)!.text).toMatch(/I restarted while working on this/));
    const closed = telegram.botMessages(6565).find((m) => m.message_id === status.message_id)!.text!;
    expect(closed).toMatch(/✅ current_time/);
    expect(closed).toMatch(/⏹ Stopped after 1 step/);
    expect(closed).not.toMatch(/⏳/);
    // The notice is in the old status message, not a line of its own; the new run has a status message of its own.
    expect(texts().filter((t) => /I restarted while working on this/.test(t))).toHaveLength(1);
    await waitUntil(() => expect(texts().some((t) => /✅ 1 step in/.test(t))).toBe(true));
    rmSync(first.dataDir, { recursive: true, force: true });
  });

  it("an answer held back by the platform at SIGKILL is posted after the restart, without asking the model again", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script({ text: "the deploy went out at noon" });
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    bots.push(first);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    telegram.failNext("sendMessage", { status: 429, retryAfter: 3600 }, 1);
    await telegram.userMessage({ text: "when did the deploy go out?", from: { id: 6464 } }).delivered;
    await waitUntil(() => expect(telegram.callsOf("sendMessage").length).toBe(1), { timeout: 10_000 });
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    expect(telegram.botMessages(6464)).toHaveLength(0);

    const second = startBotProcess(env, { dataDir: first.dataDir });
    bots.push(second);
    const texts = () => telegram.botMessages(6464).map((m) => m.text);
    await waitUntil(() => expect(texts()).toContain("the deploy went out at noon"), { timeout: 15_000 });
    await new Promise((r) => setTimeout(r, 500));
    expect(texts()).toEqual(["the deploy went out at noon"]);
    expect(model.requests).toHaveLength(1);
    rmSync(first.dataDir, { recursive: true, force: true });
  });

  it("a status message left unfinished by a SIGKILL while the platform held the answer back is finished after the restart, beside the answer", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    // The fetch answers when the test says so: by then the status message is posted.
    let release: (() => void) | undefined;
    const slow = createServer((_req, res) => void (release = () => res.end("the report")));
    await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/report`;
    model.script({ toolCalls: [{ name: "http_fetch", arguments: JSON.stringify({ url }) }] }, { text: "the report is in" });
    const { dir, env } = fetchingBot("gh-e2e-held-");
    try {
      const first = startBotProcess(env, { dataDir: dir, keepDataDir: true });
      bots.push(first);
      await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
      await telegram.userMessage({ text: "fetch the report", from: { id: 6767 } }).delivered;
      await waitUntil(() => expect(telegram.botMessages(6767).some((m) => /⏳ http_fetch/.test(m.text ?? ""))).toBe(true), { timeout: 10_000 });
      const status = telegram.botMessages(6767).find((m) => /http_fetch/.test(m.text ?? ""))!;
      // The status message's next edit gets an hour's wait for the chat, which holds the answer back too.
      telegram.failNext("editMessageText", { status: 429, retryAfter: 3600 }, 1);
      // The status message goes out as the call starts, the fetch a moment later.
      await waitUntil(() => expect(release).toBeDefined(), { timeout: 10_000 });
      release!();
      await waitUntil(() => expect(model.requests.length).toBe(2), { timeout: 10_000 });
      // A moment for the turn to end (history and answer stored together).
      await new Promise((r) => setTimeout(r, 500));
      expect(telegram.callsOf("editMessageText")).toHaveLength(1);
      expect(telegram.botMessages(6767).map((m) => m.text)).not.toContain("the report is in");
      first.child.kill("SIGKILL");
      await new Promise((r) => first.child.once("exit", r));

      const second = startBotProcess(env, { dataDir: dir, keepDataDir: true });
      bots.push(second);
      const texts = () => telegram.botMessages(6767).map((m) => m.text ?? "");
      await waitUntil(() => expect(texts()).toContain("the report is in"), { timeout: 15_000 });
      // The turn ended before the kill: its status message is finished as it ended, not cut off.
      await waitUntil(() => expect(telegram.botMessages(6767).find((m) => m.message_id === status.message_id)!.text).toMatch(/1 step in/), { timeout: 10_000 });
      const finished = telegram.botMessages(6767).find((m) => m.message_id === status.message_id)!.text!;
      expect(finished).toMatch(/✅ http_fetch/);
      expect(finished).not.toMatch(/⏳|not finished|Stopped/);
      expect(texts().filter((t) => t === "the report is in")).toHaveLength(1);
      expect(model.requests).toHaveLength(2);
    } finally {
      slow.closeAllConnections();
      slow.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a status message whose last edit the platform held back at SIGKILL, after the answer was out, is finished after the restart; the answer is not sent again", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "it is noon somewhere" });
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    bots.push(first);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    // The status message's last edit, with the summary (after the answer, in the chat's next slot),
    // gets an hour's wait; an edit before it (the step done) may go first or be folded into it.
    telegram.failNext("editMessageText", { status: 429, retryAfter: 3600, when: (params) => /1 step in/.test(String(params.text)) });
    await telegram.userMessage({ text: "what time is it?", from: { id: 6868 } }).delivered;
    const texts = () => telegram.botMessages(6868).map((m) => m.text ?? "");
    await waitUntil(() => expect(texts()).toContain("it is noon somewhere"), { timeout: 10_000 });
    await waitUntil(() => expect(telegram.callsOf("editMessageText").filter((c) => c.status === 429)).toHaveLength(1), { timeout: 10_000 });
    const status = telegram.botMessages(6868).find((m) => /current_time/.test(m.text ?? ""))!;
    expect(status.text).not.toMatch(/1 step in/);
    // A moment for the bot to note that the answer is out.
    await new Promise((r) => setTimeout(r, 300));
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));

    const second = startBotProcess(env, { dataDir: first.dataDir });
    bots.push(second);
    await waitUntil(() => expect(telegram.botMessages(6868).find((m) => m.message_id === status.message_id)!.text).toMatch(/✅ current_time[\s\S]*1 step in/), { timeout: 15_000 });
    await new Promise((r) => setTimeout(r, 500));
    expect(texts().filter((t) => t === "it is noon somewhere")).toHaveLength(1);
    expect(model.requests).toHaveLength(2);
    rmSync(first.dataDir, { recursive: true, force: true });
  });

  it("a message cut off by a second crash is reported as not finished instead of starting a third time", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script({ hang: true }, { hang: true }, { text: "should never be sent" });
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    bots.push(first);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    await telegram.userMessage({ text: "summarize the incident", from: { id: 6363 } }).delivered;
    await waitUntil(() => expect(model.requests.length).toBe(1), { timeout: 10_000 });
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));

    const second = startBotProcess(env, { dataDir: first.dataDir, keepDataDir: true });
    bots.push(second);
    await waitUntil(() => expect(model.requests.length).toBe(2), { timeout: 15_000 });
    second.child.kill("SIGKILL");
    await new Promise((r) => second.child.once("exit", r));

    const third = startBotProcess(env, { dataDir: first.dataDir });
    bots.push(third);
    const texts = () => telegram.botMessages(6363).map((m) => m.text);
    await waitUntil(
      () => expect(texts().join("\n")).toMatch(/restarted while working on your message \("summarize the incident"\), so it was not finished/),
      { timeout: 15_000 },
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(model.requests).toHaveLength(2);
    expect(texts()).not.toContain("should never be sent");
    rmSync(first.dataDir, { recursive: true, force: true });
  });
});

describe("stopping", () => {
  it("SIGTERM ends the bot within seconds even while the platform asks for an hour's wait", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    model.script({ text: "an answer that cannot be sent" });
    const bot = startBotProcess({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL });
    bots.push(bot);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    telegram.failNext("sendMessage", { status: 429, retryAfter: 3600 }, 5);
    await telegram.userMessage({ text: "hello", from: { id: 7373 } }).delivered;
    await waitUntil(() => expect(telegram.callsOf("sendMessage").length).toBeGreaterThan(0), { timeout: 10_000 });
    const started = Date.now();
    const code = await bot.stop();
    expect(Date.now() - started).toBeLessThan(9500);
    expect(code).toBe(0);
  });

  it("stops with exit code 1 and says why when another process keeps polling the same bot", async () => {
    model = await startOpenAIEmulator();
    telegram = await startTelegramEmulator();
    const bot = startBotProcess({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL });
    bots.push(bot);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    const exited = new Promise<number | null>((resolve) => bot.child.once("exit", (code) => resolve(code)));
    // A second poller: each of its polls ends the bot's running poll with 409, as Telegram does.
    for (let i = 0; i < 8 && bot.child.exitCode === null; i++) {
      await fetch(`${telegram.apiRoot}/bot${telegram.token}/getUpdates?timeout=1`).then((r) => r.text()).catch(() => "");
    }
    expect(await exited).toBe(1);
    expect(bot.output()).toMatch(/the telegram channel stopped: .*(409|another|poll)/i);
    expect(bot.output()).not.toContain(telegram.token);
  });

  it("refuses to start a second bot on a data folder a running bot uses, and the first goes on answering", async () => {
    model = await startOpenAIEmulator();
    model.setFallback(() => ({ text: "still here" }));
    telegram = await startTelegramEmulator();
    const env = { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    bots.push(first);
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });

    const second = startBotProcess(env, { dataDir: first.dataDir, keepDataDir: true });
    bots.push(second);
    const code = await new Promise<number | null>((resolve) => second.child.once("exit", (c) => resolve(c)));
    expect(code).toBe(1);
    expect(second.output()).toMatch(new RegExp(`another Gatehouse \\(pid ${first.child.pid}\\) is running on the data folder`));
    expect(readFileSync(path.join(first.dataDir, "data", "gatehouse.pid"), "utf8")).toBe(String(first.child.pid));

    await telegram.userMessage({ text: "are you there?", from: { id: 6161 } }).delivered;
    await waitUntil(() => expect(telegram.botMessages(6161).map((m) => m.text)).toContain("still here"), { timeout: 10_000 });
  });
});
