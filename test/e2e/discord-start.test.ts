import { afterEach, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { startDiscordEmulator, type DiscordEmulator, type EmuMessage } from "../emulators/discord/index.ts";
import { startBotProcess, type BotProcess } from "./process.ts";
import { waitUntil } from "../support/wait.ts";

let model: OpenAIEmulator;
let discord: DiscordEmulator;
let bot: BotProcess;

afterEach(async () => {
  await bot?.stop();
  await discord?.close();
  await model?.close();
});

const buttons = (m: EmuMessage) =>
  ((m.components ?? []) as Array<{ components?: Array<{ label?: string; custom_id?: string }> }>).flatMap((r) => r.components ?? []);

describe("npm start with DISCORD_TOKEN", () => {
  it("answers a mention in a new thread, with progress and an approval button round trip", async () => {
    model = await startOpenAIEmulator();
    discord = await startDiscordEmulator();
    model.script(
      { toolCalls: [{ name: "write_file", arguments: '{"path":"todo.txt","content":"buy milk"}' }] },
      { text: "Done: todo.txt is written." },
    );
    bot = startBotProcess({ DISCORD_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl, OPENAI_BASE_URL: model.baseURL });
    await waitUntil(() => expect(bot.output()).toContain("channel started"), { timeout: 15_000 });

    const user = "200000000000000001";
    const posted = await discord.userPosts({ channelId: discord.textChannelId, userId: user, content: `<@${discord.bot.id}> write my todo` });
    const inThread = () => discord.messages(posted.id).filter((m) => m.author.id === discord.bot.id);
    await waitUntil(() => expect(inThread().some((m) => buttons(m).length === 4)).toBe(true), { timeout: 10_000 });
    const card = inThread().find((m) => buttons(m).length === 4)!;
    const approve = buttons(card).find((b) => /approve/i.test(b.label ?? ""))!;

    const stranger = await discord.click({ channelId: posted.id, messageId: card.id, customId: approve.custom_id!, userId: "200000000000000099" });
    await discord.interactionSettled(stranger);
    expect(stranger.responses.some((r) => r.ephemeral && /may not approve/i.test(r.content ?? ""))).toBe(true);

    const click = await discord.click({ channelId: posted.id, messageId: card.id, customId: approve.custom_id!, userId: user });
    await discord.interactionSettled(click);
    await waitUntil(() => expect(inThread().map((m) => m.content).join("\n")).toContain("Done: todo.txt is written."), { timeout: 10_000 });
    // The status message shows the finished call (and the summary) in its next edit slot.
    await waitUntil(() => expect(inThread().map((m) => m.content).join("\n")).toMatch(/✅ write_file[\s\S]*✅ 1 step in/));
    expect(buttons(discord.messages(posted.id).find((m) => m.id === card.id)!)).toHaveLength(0);
    expect(readFileSync(path.join(bot.dataDir, "data", "workspace", "todo.txt"), "utf8")).toBe("buy milk");
    expect(await bot.stop()).toBe(0);
    expect(bot.output()).not.toContain(discord.token);
  });

  it("keeps a card live across SIGKILL: after the restart a click runs the tool once and the answer lands in the thread", async () => {
    model = await startOpenAIEmulator();
    discord = await startDiscordEmulator();
    model.script(
      { toolCalls: [{ name: "write_file", arguments: '{"path":"kill.txt","content":"survived"}' }] },
      { text: "kill.txt is written." },
    );
    const env = { DISCORD_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl, OPENAI_BASE_URL: model.baseURL };
    const first = startBotProcess(env, { keepDataDir: true });
    await waitUntil(() => expect(first.output()).toContain("channel started"), { timeout: 15_000 });
    const user = "200000000000000001";
    const posted = await discord.userPosts({ channelId: discord.textChannelId, userId: user, content: `<@${discord.bot.id}> write kill.txt` });
    const inThread = () => discord.messages(posted.id).filter((m) => m.author.id === discord.bot.id);
    await waitUntil(() => expect(inThread().some((m) => buttons(m).length === 4)).toBe(true), { timeout: 10_000 });
    const card = inThread().find((m) => buttons(m).length === 4)!;
    const approve = buttons(card).find((b) => /approve/i.test(b.label ?? ""))!;

    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    bot = startBotProcess(env, { dataDir: first.dataDir });
    await waitUntil(() => expect(bot.output()).toContain("channel started"), { timeout: 15_000 });
    const click = await discord.click({ channelId: posted.id, messageId: card.id, customId: approve.custom_id!, userId: user });
    await discord.interactionSettled(click);
    await waitUntil(() => expect(inThread().map((m) => m.content).join("\n")).toContain("kill.txt is written."), { timeout: 15_000 });
    expect(readFileSync(path.join(first.dataDir, "data", "workspace", "kill.txt"), "utf8")).toBe("survived");
    await waitUntil(() => expect(buttons(discord.messages(posted.id).find((m) => m.id === card.id)!)).toHaveLength(0), { timeout: 5_000 });
    // A second click on the decided card runs nothing more.
    const again = await discord.click({ channelId: posted.id, messageId: card.id, customId: approve.custom_id!, userId: user });
    await discord.interactionSettled(again);
    expect(again.responses.some((r) => r.ephemeral && /Already decided/.test(r.content ?? ""))).toBe(true);
    expect(inThread().filter((m) => (m.content ?? "").includes("kill.txt is written."))).toHaveLength(1);
    expect(model.requests).toHaveLength(2);
    // The task's progress went on in the status message it had before the restart.
    await waitUntil(() => expect(inThread().filter((m) => /1 step in/.test(m.content ?? ""))).toHaveLength(1));
    expect(inThread().find((m) => /1 step in/.test(m.content ?? ""))).toMatchObject({ content: expect.stringMatching(/🔓 write_file: approved by/) });
    expect(inThread().some((m) => /waiting for approval/.test((m.content ?? "")))).toBe(false);
    expect(inThread().map((m) => m.content).join("\n")).not.toMatch(/not finished/);
    rmSync(first.dataDir, { recursive: true, force: true });
  });
});
