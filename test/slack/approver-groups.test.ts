import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LogLevel, WebClient } from "@slack/web-api";
import { pino } from "pino";
import { ApproverCheckError, type ApproverGroups } from "../../src/ports.ts";
import { createSlackApproverGroups } from "../../adapters/slack/approver-groups.ts";
import { ALICE, GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";
import { startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";

const BOB = "U0BOB";
const of = (o: Partial<ApproverGroups>): ApproverGroups => ({ groups: [], roles: [], chatAdmins: false, ...o });

/** A pino logger whose lines land in `lines`, unscrubbed, so a test sees exactly what the adapter logged. */
function capturedLog() {
  const lines: Array<{ level: number; msg: string; [k: string]: unknown }> = [];
  const log = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe("Slack approver groups through the adapter's port", () => {
  let h: SlackHarness;
  const calls = (method: string) => h.emulator.world.calls.filter((c) => c.method === method);

  beforeEach(async () => {
    h = await createSlackHarness();
    h.emulator.world.userGroups.create({ id: "S0OPS", name: "Ops", users: [ALICE] });
  });
  afterEach(async () => {
    await h.close();
  });

  it("counts a member of a named user group as an approver, and nobody else", async () => {
    const port = h.adapter.port;
    expect(await port.isApprover!(GENERAL, ALICE, of({ groups: ["S0OPS"] }))).toBe(true);
    expect(await port.isApprover!(GENERAL, BOB, of({ groups: ["S0OPS"] }))).toBe(false);
    expect(await port.isApprover!(GENERAL, ALICE, of({}))).toBe(false);
  });

  it("counts workspace admins and owners when the rule names the chat's admins", async () => {
    h.emulator.world.setAdmin(BOB, { admin: true });
    h.emulator.world.users.set("U0CAROL", { id: "U0CAROL", name: "carol" });
    h.emulator.world.setAdmin("U0CAROL", { owner: true });
    const port = h.adapter.port;
    expect(await port.isApprover!(GENERAL, BOB, of({ chatAdmins: true }))).toBe(true);
    expect(await port.isApprover!(GENERAL, "U0CAROL", of({ chatAdmins: true }))).toBe(true);
    expect(await port.isApprover!(GENERAL, ALICE, of({ chatAdmins: true }))).toBe(false);
    // An admin is no approver for a rule that names only a group they are not in.
    expect(await port.isApprover!(GENERAL, BOB, of({ groups: ["S0OPS"] }))).toBe(false);
  });

  it("asks Slack once for a burst of clicks", async () => {
    const port = h.adapter.port;
    const answers = await Promise.all(Array.from({ length: 8 }, () => port.isApprover!(GENERAL, ALICE, of({ groups: ["S0OPS"], chatAdmins: true }))));
    expect(answers).toEqual(Array(8).fill(true));
    expect(await port.isApprover!(GENERAL, BOB, of({ groups: ["S0OPS"] }))).toBe(false);
    expect(calls("usergroups.users.list")).toHaveLength(1);
    expect(calls("users.info")).toHaveLength(1);
  });

  it("says no when a group is unknown or disabled", async () => {
    h.emulator.world.userGroups.create({ id: "S0OLD", name: "Old", users: [ALICE], disabled: true });
    expect(await h.adapter.port.isApprover!(GENERAL, ALICE, of({ groups: ["S0NOPE"] }))).toBe(false);
    expect(await h.adapter.port.isApprover!(GENERAL, ALICE, of({ groups: ["S0OLD"] }))).toBe(false);
  });

  it("lists exactly the user groups Slack does not know or has disabled, and every role", async () => {
    h.emulator.world.userGroups.create({ id: "S0OLD", name: "Old", disabled: true });
    const unknown = await h.adapter.port.unknownApproverGroups!(of({ groups: ["S0OPS", "S0OLD", "S0NOPE"], roles: ["deployers"], chatAdmins: true }));
    expect(unknown).toEqual(["S0OLD", "S0NOPE", "deployers"]);
    expect(await h.adapter.port.unknownApproverGroups!(of({ groups: ["S0OPS"] }))).toEqual([]);
  });

  it("does not call Slack to check a rule that names no user group", async () => {
    expect(await h.adapter.port.unknownApproverGroups!(of({ roles: ["admins"], chatAdmins: true }))).toEqual(["admins"]);
    expect(calls("usergroups.list")).toHaveLength(0);
  });
});

describe("Slack approver groups when Slack fails", () => {
  let emu: SlackEmulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  const build = (e: SlackEmulator, options: { now?: () => number } = {}) => {
    const { log, lines } = capturedLog();
    const client = new WebClient(e.botToken, { slackApiUrl: e.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, logLevel: LogLevel.ERROR });
    return { groups: createSlackApproverGroups({ client, log, ...options }), lines };
  };

  it("cannot tell on a failed call, logs it at warn without the token, and asks again next time", async () => {
    emu = await startSlackEmulator();
    emu.world.userGroups.create({ id: "S0OPS", name: "Ops", users: [ALICE] });
    emu.world.setAdmin(ALICE, { admin: true });
    const { groups, lines } = build(emu);
    emu.failNext("usergroups.users.list", { error: "internal_error" });
    emu.failNext("users.info", { status: 429, retryAfter: 5 });
    await expect(groups.isApprover(GENERAL, ALICE, of({ groups: ["S0OPS"] }))).rejects.toThrow(ApproverCheckError);
    await expect(groups.isApprover(GENERAL, ALICE, of({ chatAdmins: true }))).rejects.toThrow(ApproverCheckError);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.map((w) => w.method)).toEqual(["usergroups.users.list", "users.info"]);
    expect(JSON.stringify(lines)).not.toContain(emu.botToken);
    expect(await groups.isApprover(GENERAL, ALICE, of({ groups: ["S0OPS"] }))).toBe(true);
    expect(await groups.isApprover(GENERAL, ALICE, of({ chatAdmins: true }))).toBe(true);
  });

  it("cannot tell when Slack cannot be reached at all", async () => {
    const gone = await startSlackEmulator();
    const { groups } = build(gone);
    await gone.close();
    await expect(groups.isApprover(GENERAL, ALICE, of({ groups: ["S0OPS"], chatAdmins: true }))).rejects.toThrow(ApproverCheckError);
  });

  it("says yes when one check succeeds though another failed", async () => {
    emu = await startSlackEmulator();
    emu.world.userGroups.create({ id: "S0OPS", name: "Ops", users: [ALICE] });
    const { groups } = build(emu);
    emu.failNext("users.info", { status: 429, retryAfter: 5 });
    expect(await groups.isApprover(GENERAL, ALICE, of({ groups: ["S0OPS"], chatAdmins: true }))).toBe(true);
  });

  it("keeps an answer for a minute, then asks Slack again", async () => {
    emu = await startSlackEmulator();
    emu.world.userGroups.create({ id: "S0OPS", name: "Ops", users: [ALICE] });
    let now = 1_000_000;
    const { groups } = build(emu, { now: () => now });
    expect(await groups.isApprover(GENERAL, BOB, of({ groups: ["S0OPS"] }))).toBe(false);
    emu.world.userGroups.setMembers("S0OPS", [ALICE, BOB]);
    now += 59_000;
    expect(await groups.isApprover(GENERAL, BOB, of({ groups: ["S0OPS"] }))).toBe(false);
    now += 2_000;
    expect(await groups.isApprover(GENERAL, BOB, of({ groups: ["S0OPS"] }))).toBe(true);
  });

  it("refuses to check user groups without the usergroups:read scope, saying what to add", async () => {
    emu = await startSlackEmulator({ scopes: ["chat:write", "users:read"] });
    const { groups } = build(emu);
    await expect(groups.unknownApproverGroups(of({ groups: ["S0OPS"] }))).rejects.toThrow(/missing_scope.*usergroups:read/);
  });
});
