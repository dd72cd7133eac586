import { afterEach, describe, expect, it } from "vitest";
import { once } from "node:events";
import { Client, Events, GatewayIntentBits } from "discord.js";
import { pino } from "pino";
import { ApproverCheckError, type ApproverGroups } from "../../src/ports.ts";
import { createDiscordApproverGroups } from "../../adapters/discord/approver-groups.ts";
import { startDiscordEmulator, type DiscordEmulator } from "../emulators/discord/index.ts";
import { createDiscordHarness, type DiscordHarness } from "./harness.ts";
import { RecordingSink } from "./recording-sink.ts";

const ALICE = "300000000000000001";
const BOB = "300000000000000002";
const of = (o: Partial<ApproverGroups>): ApproverGroups => ({ groups: [], roles: [], chatAdmins: false, ...o });

/** A pino logger whose lines land in `lines`, unscrubbed, so a test sees exactly what the adapter logged. */
function capturedLog() {
  const lines: Array<{ level: number; msg: string; [k: string]: unknown }> = [];
  const log = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/**
 * A server with an "ops" role (Alice holds it) and an "admins" role with the Administrator
 * permission (Bob holds it), made before the bot connects; then the adapter is started.
 */
async function serverWithRoles() {
  const { log, lines } = capturedLog();
  h = await createDiscordHarness({ log });
  const emu = h.emulator;
  const ops = await emu.createRole("ops");
  const admins = await emu.createRole("admins", { administrator: true });
  emu.setMemberRole(ALICE, ops);
  emu.setMemberRole(BOB, admins);
  await h.adapter.start(new RecordingSink());
  const memberCalls = () => emu.calls.filter((c) => c.route === "getGuildMember");
  return { h, emu, port: h.adapter.port, ops, admins, lines, memberCalls };
}

describe("Discord approver roles through the adapter's port", () => {
  it("counts a member holding a named role as an approver, in the channel and its threads, and nobody else", async () => {
    const { emu, port, ops } = await serverWithRoles();
    const thread = await emu.userStartsThread(ALICE);
    expect(await port.isApprover!(emu.textChannelId, ALICE, of({ roles: [ops] }))).toBe(true);
    expect(await port.isApprover!(thread, ALICE, of({ roles: [ops] }))).toBe(true);
    expect(await port.isApprover!(emu.textChannelId, BOB, of({ roles: [ops] }))).toBe(false);
    expect(await port.isApprover!(emu.textChannelId, ALICE, of({ groups: [ops] }))).toBe(false);
  });

  it("counts members with the Administrator permission when the rule names the chat's admins", async () => {
    const { emu, port, ops } = await serverWithRoles();
    expect(await port.isApprover!(emu.textChannelId, BOB, of({ chatAdmins: true }))).toBe(true);
    expect(await port.isApprover!(emu.textChannelId, ALICE, of({ chatAdmins: true }))).toBe(false);
    expect(await port.isApprover!(emu.textChannelId, BOB, of({ roles: [ops] }))).toBe(false);
  });

  it("counts nobody in a direct message, where there are no roles", async () => {
    const { emu, port, ops } = await serverWithRoles();
    expect(await port.isApprover!(emu.dmChannel(ALICE), ALICE, of({ roles: [ops], chatAdmins: true }))).toBe(false);
  });

  it("fetches the member once for a burst of clicks", async () => {
    const { emu, port, ops, memberCalls } = await serverWithRoles();
    const answers = await Promise.all(Array.from({ length: 8 }, () => port.isApprover!(emu.textChannelId, ALICE, of({ roles: [ops], chatAdmins: true }))));
    expect(answers).toEqual(Array(8).fill(true));
    expect(memberCalls()).toHaveLength(1);
  });

  it("cannot tell when the member lookup fails, logs it at warn without the token, and asks again next time", async () => {
    const { emu, port, ops, lines, memberCalls } = await serverWithRoles();
    emu.failNext("getGuildMember", { status: 403, code: 50001, message: "Missing Access" });
    await expect(port.isApprover!(emu.textChannelId, ALICE, of({ roles: [ops] }))).rejects.toThrow(ApproverCheckError);
    const warning = lines.find((l) => l.level === 40 && /approver check failed/.test(l.msg));
    expect(warning?.err).toMatch(/Missing Access/);
    expect(JSON.stringify(lines)).not.toContain(emu.token);
    expect(await port.isApprover!(emu.textChannelId, ALICE, of({ roles: [ops] }))).toBe(true);
    expect(memberCalls()).toHaveLength(2);
  });

  it("says no for someone who is not a member of the server", async () => {
    const { emu, port, ops } = await serverWithRoles();
    expect(await port.isApprover!(emu.textChannelId, "399999999999999999", of({ roles: [ops], chatAdmins: true }))).toBe(false);
  });

  it("lists exactly the roles found in none of the bot's servers, and every group", async () => {
    const { emu, port, ops, admins } = await serverWithRoles();
    const unknown = await port.unknownApproverGroups!(of({ roles: [ops, "111111111111111111", admins], groups: ["S0OPS"], chatAdmins: true }));
    expect(unknown).toEqual(["S0OPS", "111111111111111111"]);
    expect(await port.unknownApproverGroups!(of({ roles: [ops, emu.guildId] }))).toEqual([]);
  });

  it("refuses to check roles when Discord will not list them, saying which server", async () => {
    const { emu, port, ops } = await serverWithRoles();
    emu.failNext("getGuildRoles", { status: 403, code: 50001, message: "Missing Access" });
    await expect(port.unknownApproverGroups!(of({ roles: [ops] }))).rejects.toThrow(/Gatehouse test server.*Missing Access/);
  });
});

describe("Discord approver roles before the channel is connected", () => {
  it("cannot tell who holds a role, nor check roles, yet", async () => {
    h = await createDiscordHarness();
    const ops = await h.emulator.createRole("ops");
    h.emulator.setMemberRole(ALICE, ops);
    await expect(h.adapter.port.isApprover!(h.emulator.textChannelId, ALICE, of({ roles: [ops] }))).rejects.toThrow(ApproverCheckError);
    await expect(h.adapter.port.unknownApproverGroups!(of({ roles: [ops] }))).rejects.toThrow(/only once the Discord channel is connected/);
    expect(await h.adapter.port.unknownApproverGroups!(of({ groups: ["S0OPS"] }))).toEqual(["S0OPS"]);
  });
});

describe("Discord approver roles over time", () => {
  let emu: DiscordEmulator | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.destroy();
    await emu?.close();
    client = undefined;
    emu = undefined;
  });

  it("keeps a member's roles for a minute, then fetches them again", async () => {
    emu = await startDiscordEmulator();
    const ops = await emu.createRole("ops");
    emu.setMemberRole(ALICE, ops);
    client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: emu.apiUrl } });
    const ready = once(client, Events.ClientReady);
    await client.login(emu.token);
    await ready;
    let now = 1_000_000;
    const c = client;
    const groups = createDiscordApproverGroups(() => c, pino({ level: "silent" }), { now: () => now });
    expect(await groups.isApprover(emu.textChannelId, ALICE, of({ roles: [ops] }))).toBe(true);
    emu.setMemberRole(ALICE, ops, false);
    now += 59_000;
    expect(await groups.isApprover(emu.textChannelId, ALICE, of({ roles: [ops] }))).toBe(true);
    now += 2_000;
    expect(await groups.isApprover(emu.textChannelId, ALICE, of({ roles: [ops] }))).toBe(false);
  });
});
