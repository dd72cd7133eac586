import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TRIGGER_TTL_MS, startSlackEmulator, type SlackEmulator } from "./index.ts";

async function viewsOpen(emu: SlackEmulator, body: Record<string, unknown>) {
  const res = await fetch(`${emu.apiUrl}views.open`, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${emu.botToken}` },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { ok: boolean; error?: string; view?: { id: string } };
}

const modal = (overrides: Record<string, unknown> = {}) => ({
  type: "modal",
  callback_id: "reason",
  title: { type: "plain_text", text: "Deny with reason" },
  submit: { type: "plain_text", text: "Deny" },
  blocks: [{ type: "input", block_id: "b", label: { type: "plain_text", text: "Why?" }, element: { type: "plain_text_input", action_id: "a", max_length: 10 } }],
  ...overrides,
});

describe("Slack emulator: modals", () => {
  let emu: SlackEmulator;
  beforeEach(async () => {
    emu = await startSlackEmulator();
  });
  afterEach(async () => {
    await emu.close();
  });

  it("opens a modal once per trigger_id: a second use is exchanged_trigger_id, an unknown one invalid_trigger_id", async () => {
    const trigger = emu.world.views.issueTrigger("U0ALICE");
    const first = await viewsOpen(emu, { trigger_id: trigger, view: modal() });
    expect(first.ok).toBe(true);
    expect(emu.world.views.openFor("U0ALICE").map((v) => v.id)).toEqual([first.view!.id]);
    expect(await viewsOpen(emu, { trigger_id: trigger, view: modal() })).toEqual({ ok: false, error: "exchanged_trigger_id" });
    expect(await viewsOpen(emu, { trigger_id: "123.forged", view: modal() })).toEqual({ ok: false, error: "invalid_trigger_id" });
  });

  it("refuses a trigger_id older than 3 seconds with expired_trigger_id", async () => {
    const stale = emu.world.views.issueTrigger("U0ALICE", Date.now() - TRIGGER_TTL_MS - 1);
    expect(await viewsOpen(emu, { trigger_id: stale, view: modal() })).toEqual({ ok: false, error: "expired_trigger_id" });
    expect(emu.world.views.opened).toEqual([]);
  });

  it("refuses a view over Slack's limits: a title over 24 characters, an input over 3,000, no submit with inputs", async () => {
    const open = (view: Record<string, unknown>) => viewsOpen(emu, { trigger_id: emu.world.views.issueTrigger("U0ALICE"), view });
    expect((await open(modal({ title: { type: "plain_text", text: "t".repeat(25) } }))).error).toBe("invalid_arguments");
    const long = modal();
    (long.blocks[0]!.element as { max_length: number }).max_length = 3001;
    expect((await open(long)).error).toBe("invalid_arguments");
    expect((await open(modal({ submit: undefined }))).error).toBe("invalid_arguments");
    expect((await open(modal({ private_metadata: "m".repeat(3001) }))).error).toBe("invalid_arguments");
    expect(emu.world.views.opened).toEqual([]);
  });

  it("does not submit what Slack's client would not: a required input left empty, text over max_length", async () => {
    await viewsOpen(emu, { trigger_id: emu.world.views.issueTrigger("U0ALICE"), view: modal() });
    const [view] = emu.world.views.openFor("U0ALICE");
    await expect(emu.submitView(view!.id, { a: "  " })).rejects.toThrow(/empty/);
    await expect(emu.submitView(view!.id, { a: "x".repeat(11) })).rejects.toThrow(/more than 10/);
    expect(view!.state).toBe("open");
  });
});
