import { Api, GrammyError } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { checkHtml } from "../emulators/telegram/markup-check.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";

let emu: TelegramEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function setup() {
  emu = await startTelegramEmulator();
  const api = new Api(emu.token, { apiRoot: emu.apiRoot });
  return { emu, api };
}

const apiError = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as GrammyError);

describe("telegram emulator limits the bot relies on", () => {
  it("rejects callback_data over 64 bytes with BUTTON_DATA_INVALID", async () => {
    const { emu, api } = await setup();
    emu.userMessage({ text: "hi", from: { id: 1, first_name: "A" } });
    const err = await apiError(api.sendMessage(1, "card", { reply_markup: { inline_keyboard: [[{ text: "x", callback_data: "é".repeat(33) }]] } }));
    expect(err).toMatchObject({ error_code: 400, description: "Bad Request: BUTTON_DATA_INVALID" });
  });

  it("refuses HTML Telegram would refuse: bare < or &, unknown or unbalanced tags", () => {
    expect(checkHtml("a < b")).toMatchObject({ ok: false });
    expect(checkHtml("fish & chips")).toMatchObject({ ok: false });
    expect(checkHtml("<div>x</div>")).toMatchObject({ ok: false, description: expect.stringContaining('Unsupported start tag "div"') });
    expect(checkHtml("<b>x<i>y</b></i>")).toMatchObject({ ok: false });
    expect(checkHtml("<b>open")).toMatchObject({ ok: false });
    expect(checkHtml('<b>a &lt; b &amp; c</b> <a href="https://x.y/?a=1&amp;b=2">l</a> &#x1F600;')).toEqual({ ok: true, visible: 'a < b & c l 😀' });
  });

  it("counts the 4,096 limit on the visible text, after markup", async () => {
    const { emu, api } = await setup();
    emu.userMessage({ text: "hi", from: { id: 1, first_name: "A" } });
    await expect(api.sendMessage(1, `<b>${"a".repeat(4096)}</b>`, { parse_mode: "HTML" })).resolves.toHaveProperty("message_id");
    const err = await apiError(api.sendMessage(1, "a".repeat(4097)));
    expect(err).toMatchObject({ error_code: 400, description: "Bad Request: message is too long" });
  });

  it("limits a group to 20 messages a minute with retry_after", async () => {
    emu = await startTelegramEmulator({ limits: { perChatBurst: 100 } });
    const api = new Api(emu.token, { apiRoot: emu.apiRoot });
    emu.userMessage({ text: "hi", chat: { id: -5, type: "group", title: "G" } });
    for (let i = 0; i < 20; i++) await api.sendMessage(-5, `m${i}`);
    const err = await apiError(api.sendMessage(-5, "one too many"));
    expect(err?.error_code).toBe(429);
    expect(err?.parameters.retry_after).toBeGreaterThan(50);
  });

  it("limits edits in a group to 20 a minute, apart from its messages", async () => {
    emu = await startTelegramEmulator({ limits: { perChatBurst: 100 } });
    const api = new Api(emu.token, { apiRoot: emu.apiRoot });
    emu.userMessage({ text: "hi", chat: { id: -6, type: "group", title: "G" } });
    const sent = await api.sendMessage(-6, "status 0");
    for (let i = 1; i <= 20; i++) await api.editMessageText(-6, sent.message_id, `status ${i}`);
    const err = await apiError(api.editMessageText(-6, sent.message_id, "one too many"));
    expect(err?.error_code).toBe(429);
    expect(err?.parameters.retry_after).toBeGreaterThan(50);
    expect((await api.sendMessage(-6, "a message still goes")).text).toBe("a message still goes");
  });

  it("answers 401 for a wrong token", async () => {
    const { emu } = await setup();
    const err = await apiError(new Api("1:nope", { apiRoot: emu.apiRoot }).getMe());
    expect(err).toMatchObject({ error_code: 401, description: "Unauthorized" });
  });

  it("confirms updates below the offset and refuses polling while a webhook is set", async () => {
    const { emu, api } = await setup();
    const a = emu.userMessage({ text: "one" });
    const b = emu.userMessage({ text: "two" });
    expect((await api.getUpdates({ timeout: 0 })).map((u) => u.update_id)).toEqual([a.update.update_id, b.update.update_id]);
    expect((await api.getUpdates({ offset: b.update.update_id, timeout: 0 })).map((u) => u.update_id)).toEqual([b.update.update_id]);
    expect(await api.getUpdates({ offset: b.update.update_id + 1, timeout: 0 })).toEqual([]);
    await api.setWebhook("http://127.0.0.1:9/hook");
    expect(await apiError(api.getUpdates({ timeout: 0 }))).toMatchObject({ error_code: 409 });
  });

  it("ends an older long poll with 409 when a newer one starts", async () => {
    const { emu, api } = await setup();
    const older = apiError(api.getUpdates({ timeout: 5 }));
    await new Promise((r) => setTimeout(r, 50));
    const newer = api.getUpdates({ timeout: 0 });
    expect(await older).toMatchObject({ error_code: 409, description: expect.stringContaining("terminated by other getUpdates request") });
    await expect(newer).resolves.toEqual([]);
    expect(emu.callsOf("getUpdates")).toHaveLength(2);
  });

  it("reports an edit that changes nothing as not modified", async () => {
    const { emu, api } = await setup();
    emu.userMessage({ text: "hi", from: { id: 1, first_name: "A" } });
    const sent = await api.sendMessage(1, "same");
    const err = await apiError(api.editMessageText(1, sent.message_id, "same"));
    expect(err?.description).toMatch(/message is not modified/);
  });

  it("accepts form-encoded parameters like the real Bot API", async () => {
    const { emu } = await setup();
    emu.userMessage({ text: "hi", from: { id: 1, first_name: "A" } });
    const body = new URLSearchParams({ chat_id: "1", text: "<b>form</b>", parse_mode: "HTML", reply_markup: JSON.stringify({ inline_keyboard: [[{ text: "ok", callback_data: "x" }]] }) });
    const res = await fetch(`${emu.apiRoot}/bot${emu.token}/sendMessage`, { method: "POST", body });
    expect(res.status).toBe(200);
    expect(emu.botMessages(1).map((m) => [m.text, m.reply_markup?.inline_keyboard[0]![0]!.callback_data])).toEqual([["form", "x"]]);
  });
});

describe("telegram emulator: chat members", () => {
  const GROUP = { id: -700, type: "supergroup" as const, title: "Team" };

  it("reports the status a test gave, members who wrote in the chat, and people who left", async () => {
    const { emu, api } = await setup();
    emu.userMessage({ text: "hi", chat: GROUP, from: { id: 1, first_name: "Ann" } });
    emu.userMessage({ text: "hi", chat: GROUP, from: { id: 2, first_name: "Ben" } });
    emu.userMessage({ text: "hi", from: { id: 3, first_name: "Cy" } });
    emu.setChatMember(GROUP, { id: 1, first_name: "Ann" }, "creator");
    emu.setChatMember(GROUP, { id: 4, first_name: "Dee" }, "administrator");
    const status = async (chat: number, user: number) => (await api.getChatMember(chat, user)).status;
    expect(await status(GROUP.id, 1)).toBe("creator");
    expect(await status(GROUP.id, 4)).toBe("administrator");
    expect(await status(GROUP.id, 2)).toBe("member");
    expect(await status(GROUP.id, 3)).toBe("left");
    expect(await status(GROUP.id, emu.bot.id)).toBe("member");
    expect(await status(3, 3)).toBe("member");
    expect(await api.getChatMember(GROUP.id, 4)).toMatchObject({ user: { id: 4, first_name: "Dee" }, can_manage_chat: true });
  });

  it("answers 400 for an unknown chat or an unknown user", async () => {
    const { emu, api } = await setup();
    emu.userMessage({ text: "hi", chat: GROUP, from: { id: 1, first_name: "Ann" } });
    expect(await apiError(api.getChatMember(-999, 1))).toMatchObject({ error_code: 400, description: "Bad Request: chat not found" });
    expect(await apiError(api.getChatMember(GROUP.id, 99))).toMatchObject({ error_code: 400, description: "Bad Request: user not found" });
  });
});
