import { Api, GrammyError } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { startTelegramEmulator, type TelegramEmulator } from "./index.ts";

let emu: TelegramEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const GROUP = { id: -1002000, type: "supergroup" as const, title: "Team" };
const apiError = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as GrammyError);

async function setup() {
  emu = await startTelegramEmulator();
  const api = new Api(emu.token, { apiRoot: emu.apiRoot });
  const asked = emu.userMessage({ text: "hi", chat: GROUP, from: { id: 5, first_name: "Eve" } });
  return { emu, api, asked: asked.message };
}

describe("Telegram emulator: ForceReply", () => {
  it("opens the reply box for everyone without selective, and with it only for mentioned users and the sender replied to", async () => {
    const { emu, api, asked } = await setup();
    await api.sendMessage(GROUP.id, "anyone?", { reply_markup: { force_reply: true } });
    await api.sendMessage(GROUP.id, '<a href="tg://user?id=7">Grace</a>, why?', {
      parse_mode: "HTML", reply_parameters: { message_id: asked.message_id }, reply_markup: { force_reply: true, selective: true, input_field_placeholder: "Why?" },
    });
    const [open, selective] = emu.botMessages(GROUP.id);
    expect(open!.forceReply).toEqual({ for: "everyone" });
    expect(selective!.forceReply).toEqual({ for: [7, 5], placeholder: "Why?" });
    expect(selective!.text).toBe("Grace, why?");
    expect(selective!.reply_markup).toBeUndefined();
  });

  it("refuses force_reply other than true and a placeholder over 64 characters", async () => {
    const { api } = await setup();
    const off = await apiError(api.sendMessage(GROUP.id, "x", { reply_markup: { force_reply: false } as never }));
    expect(off).toMatchObject({ error_code: 400 });
    const long = await apiError(api.sendMessage(GROUP.id, "x", { reply_markup: { force_reply: true, input_field_placeholder: "p".repeat(65) } }));
    expect(long).toMatchObject({ error_code: 400 });
  });
});
