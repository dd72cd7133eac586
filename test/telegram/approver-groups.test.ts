import { afterEach, describe, expect, it } from "vitest";
import { Api } from "grammy";
import { pino } from "pino";
import { ApproverCheckError, type ApproverGroups } from "../../src/ports.ts";
import { createTelegramApproverGroups } from "../../adapters/telegram/approver-groups.ts";
import { HARNESS_GROUP, createTelegramHarness, type TelegramHarness } from "./harness.ts";

const GROUP = String(HARNESS_GROUP.id);
const of = (o: Partial<ApproverGroups>): ApproverGroups => ({ groups: [], roles: [], chatAdmins: false, ...o });

/** A pino logger whose lines land in `lines`, unscrubbed, so a test sees exactly what the adapter logged. */
function capturedLog() {
  const lines: Array<{ level: number; msg: string; [k: string]: unknown }> = [];
  const log = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

let h: TelegramHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The harness group with a creator (1), an administrator (2) and a plain member (3) who wrote there. */
async function groupWithAdmins() {
  const { log, lines } = capturedLog();
  h = await createTelegramHarness({ adapter: { log } });
  const emu = h.emulator;
  emu.setChatMember(HARNESS_GROUP, { id: 1, first_name: "Owner" }, "creator");
  emu.setChatMember(HARNESS_GROUP, { id: 2, first_name: "Admin" }, "administrator");
  emu.userMessage({ text: "hello", chat: HARNESS_GROUP, from: { id: 3, first_name: "Member" } });
  emu.userMessage({ text: "hello", from: { id: 3, first_name: "Member" } });
  return { emu, port: h.adapter.port, lines, memberCalls: () => emu.callsOf("getChatMember") };
}

describe("Telegram chat admins through the adapter's port", () => {
  it("counts the chat's creator and administrators when the rule names the chat's admins, and nobody else", async () => {
    const { port } = await groupWithAdmins();
    expect(await port.isApprover!(GROUP, "1", of({ chatAdmins: true }))).toBe(true);
    expect(await port.isApprover!(GROUP, "2", of({ chatAdmins: true }))).toBe(true);
    expect(await port.isApprover!(GROUP, "3", of({ chatAdmins: true }))).toBe(false);
    expect(await port.isApprover!(GROUP, "2", of({ groups: ["admins"], roles: ["admins"] }))).toBe(false);
  });

  it("counts nobody as an admin of a private chat, without asking Telegram", async () => {
    const { port, memberCalls } = await groupWithAdmins();
    expect(await port.isApprover!("3", "3", of({ chatAdmins: true }))).toBe(false);
    expect(memberCalls()).toHaveLength(0);
  });

  it("asks Telegram once for a burst of clicks", async () => {
    const { port, memberCalls } = await groupWithAdmins();
    const answers = await Promise.all(Array.from({ length: 8 }, () => port.isApprover!(GROUP, "2", of({ chatAdmins: true }))));
    expect(answers).toEqual(Array(8).fill(true));
    expect(memberCalls()).toHaveLength(1);
  });

  it("cannot tell when Telegram fails (logged at warn without the token), says no for an unknown user or chat, and asks again next time", async () => {
    const { emu, port, lines, memberCalls } = await groupWithAdmins();
    emu.failNext("getChatMember", { status: 500 });
    await expect(port.isApprover!(GROUP, "2", of({ chatAdmins: true }))).rejects.toThrow(ApproverCheckError);
    expect(await port.isApprover!(GROUP, "99", of({ chatAdmins: true }))).toBe(false);
    expect(await port.isApprover!("-12345", "2", of({ chatAdmins: true }))).toBe(false);
    const warnings = lines.filter((l) => l.level === 40 && /approver check failed/.test(l.msg));
    expect(warnings.map((w) => w.err)).toEqual([expect.stringMatching(/Internal Server Error/)]);
    expect(JSON.stringify(lines)).not.toContain(emu.token);
    expect(await port.isApprover!(GROUP, "2", of({ chatAdmins: true }))).toBe(true);
    expect(memberCalls()).toHaveLength(4);
  });

  it("lists every group and role as unknown: Telegram has neither", async () => {
    const { port } = await groupWithAdmins();
    expect(await port.unknownApproverGroups!(of({ groups: ["S0OPS", "S0OPS"], roles: ["deployers"], chatAdmins: true }))).toEqual(["S0OPS", "deployers"]);
    expect(await port.unknownApproverGroups!(of({ chatAdmins: true }))).toEqual([]);
  });

  it("keeps an answer for a minute, then asks Telegram again", async () => {
    const { emu } = await groupWithAdmins();
    let now = 1_000_000;
    const groups = createTelegramApproverGroups({ api: new Api(emu.token, { apiRoot: emu.apiRoot }), log: pino({ level: "silent" }), now: () => now });
    expect(await groups.isApprover(GROUP, "3", of({ chatAdmins: true }))).toBe(false);
    emu.setChatMember(HARNESS_GROUP, { id: 3, first_name: "Member" }, "administrator");
    now += 59_000;
    expect(await groups.isApprover(GROUP, "3", of({ chatAdmins: true }))).toBe(false);
    now += 2_000;
    expect(await groups.isApprover(GROUP, "3", of({ chatAdmins: true }))).toBe(true);
  });
});
