import { afterEach, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { buttonsOf, startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";
import { startBotProcess, type BotProcess } from "./process.ts";
import { waitUntil } from "../support/wait.ts";

let model: OpenAIEmulator;
let slack: SlackEmulator;
let bot: BotProcess;

afterEach(async () => {
  await bot?.stop();
  await slack?.close();
  await model?.close();
});

const CHANNEL = "C0GENERAL";

describe("npm start with SLACK_BOT_TOKEN and SLACK_APP_TOKEN", () => {
  it("answers a mention in its thread, with progress and an approval card only the requester may click", async () => {
    model = await startOpenAIEmulator();
    slack = await startSlackEmulator();
    slack.world.channels.add(CHANNEL);
    slack.world.users.set("U0BOB", { id: "U0BOB", name: "bob" });
    model.script(
      { toolCalls: [{ name: "write_file", arguments: '{"path":"plan.md","content":"ship it"}' }] },
      { text: "Wrote **plan.md**." },
    );
    bot = startBotProcess({ SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl, OPENAI_BASE_URL: model.baseURL });
    await slack.waitForSocket(15_000);

    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: `<@${slack.botUserId}> write the plan` });
    const thread = () => slack.messagesIn(CHANNEL, message.ts).filter((m) => m.user === slack.botUserId);
    await waitUntil(() => expect(thread().some((m) => buttonsOf(m.blocks).length === 4)).toBe(true), { timeout: 10_000 });
    const card = thread().find((m) => buttonsOf(m.blocks).length === 4)!;
    expect(card.threadTs).toBe(message.ts);
    const approve = buttonsOf(card.blocks).find((b) => /approve/i.test(b.label))!;

    await slack.click(CHANNEL, card.ts, "U0BOB", approve.value);
    await waitUntil(() => expect(slack.world.ephemerals.some((e) => e.user === "U0BOB" && /may not approve/i.test(e.text))).toBe(true));
    expect(() => readFileSync(path.join(bot.dataDir, "data", "workspace", "plan.md"))).toThrow();

    await slack.click(CHANNEL, card.ts, "U0ALICE", approve.value);
    await waitUntil(() => expect(thread().map((m) => m.text).join("\n")).toContain("Wrote *plan.md*."), { timeout: 10_000 });
    // The status message shows the finished call (and the summary) in its next edit slot.
    await waitUntil(() => expect(thread().map((m) => m.text).join("\n")).toMatch(/✅ write_file[\s\S]*✅ 1 step in/));
    expect(buttonsOf(slack.world.findMessage(CHANNEL, card.ts)!.blocks)).toHaveLength(0);
    expect(readFileSync(path.join(bot.dataDir, "data", "workspace", "plan.md"), "utf8")).toBe("ship it");
    expect(await bot.stop()).toBe(0);
    // The log names the channel once per line (a key written twice reads differently in different tools).
    const lines = bot.output().split("\n").filter((l) => l.startsWith("{"));
    expect(lines.filter((l) => l.includes('"channel":"slack"')).length).toBeGreaterThan(2);
    expect(lines.filter((l) => l.split('"channel":').length > 2)).toEqual([]);
  });

  it("keeps a card live across SIGKILL: after the restart a click runs the tool once and the answer lands in the thread", async () => {
    model = await startOpenAIEmulator();
    slack = await startSlackEmulator();
    slack.world.channels.add(CHANNEL);
    model.script(
      { toolCalls: [{ name: "write_file", arguments: '{"path":"kill.md","content":"survived"}' }] },
      { text: "kill.md is written." },
    );
    const env = { SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    await slack.waitForSocket(15_000);
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: `<@${slack.botUserId}> write kill.md` });
    const thread = () => slack.messagesIn(CHANNEL, message.ts).filter((m) => m.user === slack.botUserId);
    await waitUntil(() => expect(thread().some((m) => buttonsOf(m.blocks).length === 4)).toBe(true), { timeout: 10_000 });
    const card = thread().find((m) => buttonsOf(m.blocks).length === 4)!;
    const approve = buttonsOf(card.blocks).find((b) => /approve/i.test(b.label))!;

    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    bot = startBotProcess(env, { dataDir: first.dataDir });
    await slack.waitForSocket(15_000);
    await slack.click(CHANNEL, card.ts, "U0ALICE", approve.value);
    await waitUntil(() => expect(thread().map((m) => m.text).join("\n")).toContain("kill.md is written."), { timeout: 15_000 });
    expect(readFileSync(path.join(first.dataDir, "data", "workspace", "kill.md"), "utf8")).toBe("survived");
    await waitUntil(() => expect(buttonsOf(slack.world.findMessage(CHANNEL, card.ts)!.blocks)).toHaveLength(0), { timeout: 5_000 });
    // A second click on the decided card runs nothing more.
    await slack.click(CHANNEL, card.ts, "U0ALICE", approve.value);
    await waitUntil(() => expect(slack.world.ephemerals.some((e) => e.user === "U0ALICE" && /Already decided/.test(e.text))).toBe(true));
    expect(thread().filter((m) => m.text.includes("kill.md is written."))).toHaveLength(1);
    expect(model.requests).toHaveLength(2);
    // The task's progress went on in the status message it had before the restart.
    await waitUntil(() => expect(thread().filter((m) => /1 step in/.test(m.text))).toHaveLength(1));
    expect(thread().find((m) => /1 step in/.test(m.text))).toMatchObject({ text: expect.stringMatching(/🔓 write_file: approved by/) });
    expect(thread().some((m) => /waiting for approval/.test(m.text))).toBe(false);
    expect(thread().map((m) => m.text).join("\n")).not.toMatch(/not finished/);
    rmSync(first.dataDir, { recursive: true, force: true });
  });

  it("survives a malformed Socket Mode envelope and keeps answering", async () => {
    model = await startOpenAIEmulator();
    slack = await startSlackEmulator();
    slack.world.channels.add(CHANNEL);
    model.script({ text: "still here" });
    bot = startBotProcess({ SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl, OPENAI_BASE_URL: model.baseURL });
    await slack.waitForSocket(15_000);
    await slack.deliverRaw("events_api", {}).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(bot.child.exitCode).toBeNull();
    await slack.waitForSocket(15_000);
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: `<@${slack.botUserId}> are you alive?` });
    await waitUntil(() => expect(slack.messagesIn(CHANNEL, message.ts).map((m) => m.text)).toContain("still here"));
    expect(bot.output()).toMatch(/uncaught error; the bot keeps running|malformed|dropped/);
  });
});
