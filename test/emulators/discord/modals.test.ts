import { afterEach, describe, expect, it } from "vitest";
import { startDiscordEmulator, type DiscordEmulator, type EmuInteraction } from "./index.ts";

let emulator: DiscordEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function api(emu: DiscordEmulator, path: string, body: unknown, token: string | null = emu.token) {
  const res = await fetch(`${emu.apiUrl}/v10${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bot ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: res.status === 204 ? undefined : ((await res.json()) as Record<string, unknown>) };
}

const answer = (emu: DiscordEmulator, i: EmuInteraction, body: unknown) => api(emu, `/interactions/${i.id}/${i.token}/callback`, body, null);

const modal = (overrides: Record<string, unknown> = {}) => ({
  custom_id: "gh1:abcdef:r",
  title: "Deny with reason",
  components: [{ type: 1, components: [{ type: 4, custom_id: "reason", style: 2, label: "Why?", max_length: 10, required: true }] }],
  ...overrides,
});

/** A message with one button, and a user's click on it. */
async function clicked(emu: DiscordEmulator): Promise<EmuInteraction> {
  const row = { type: 1, components: [{ type: 2, style: 2, label: "Deny with reason…", custom_id: "gh1:abcdef:r" }] };
  const posted = await api(emu, `/channels/${emu.textChannelId}/messages`, { content: "card", components: [row] });
  return emu.click({ channelId: emu.textChannelId, messageId: String(posted.body!.id), customId: "gh1:abcdef:r", userId: "200000000000000001" });
}

describe("Discord emulator: modals", () => {
  it("shows a modal in answer to a button click, and the submission carries the typed values and the message", async () => {
    emulator = await startDiscordEmulator();
    const click = await clicked(emulator);
    expect((await answer(emulator, click, { type: 9, data: modal() })).status).toBe(204);
    const [shown] = emulator.openModals("200000000000000001");
    expect(shown).toMatchObject({ interactionId: click.id, messageId: click.messageId, body: { custom_id: "gh1:abcdef:r" } });
    const submitted = await emulator.submitModal(shown!, { reason: "because" });
    expect(submitted).toMatchObject({ type: 5, customId: "gh1:abcdef:r", messageId: click.messageId });
    expect(emulator.openModals("200000000000000001")).toEqual([]);
  });

  it("refuses a modal as the answer to a modal submission, and a second answer to one interaction", async () => {
    emulator = await startDiscordEmulator();
    const click = await clicked(emulator);
    await answer(emulator, click, { type: 9, data: modal() });
    const submitted = await emulator.submitModal(emulator.openModals("200000000000000001")[0]!, { reason: "because" });
    const again = await answer(emulator, submitted, { type: 9, data: modal() });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: 50035, errors: { type: { _errors: [{ code: "BASE_TYPE_CHOICES", message: "Value must be one of {4, 5, 6, 7}." }] } } });
    expect((await answer(emulator, submitted, { type: 6 })).status).toBe(204);
    expect((await answer(emulator, submitted, { type: 4, data: { content: "late" } })).body).toMatchObject({ code: 40060 });
  });

  it("refuses a modal over Discord's limits: a title over 45 characters, a text input label over 45", async () => {
    emulator = await startDiscordEmulator();
    const long = await answer(emulator, await clicked(emulator), { type: 9, data: modal({ title: "t".repeat(46) }) });
    expect(long.body).toMatchObject({ code: 50035, errors: { data: { title: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH" }] } } } });
    const label = modal();
    label.components[0]!.components[0]!.label = "l".repeat(46);
    expect((await answer(emulator, await clicked(emulator), { type: 9, data: label })).status).toBe(400);
    expect(emulator.state.modals).toEqual([]);
  });

  it("does not submit what Discord's client would not: a required input left empty, text over max_length", async () => {
    emulator = await startDiscordEmulator();
    await answer(emulator, await clicked(emulator), { type: 9, data: modal() });
    const [shown] = emulator.openModals("200000000000000001");
    await expect(emulator.submitModal(shown!, { reason: "" })).rejects.toThrow(/empty/);
    await expect(emulator.submitModal(shown!, { reason: "x".repeat(11) })).rejects.toThrow(/more than 10/);
    expect(shown!.open).toBe(true);
  });
});
