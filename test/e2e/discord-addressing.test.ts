import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { startDiscordEmulator, type DiscordEmulator } from "../emulators/discord/index.ts";
import { startBotProcess, type BotProcess } from "./process.ts";
import { waitUntil } from "../support/wait.ts";

const USER = "200000000000000001";
let model: OpenAIEmulator | undefined;
let discord: DiscordEmulator | undefined;
const bots: BotProcess[] = [];

afterEach(async () => {
  for (const bot of bots.splice(0)) await bot.stop();
  await discord?.close();
  await model?.close();
});

function env(extra: Record<string, string> = {}) {
  return { DISCORD_TOKEN: discord!.token, DISCORD_API_URL: discord!.apiUrl, OPENAI_BASE_URL: model!.baseURL, ...extra };
}

async function started(bot: BotProcess): Promise<BotProcess> {
  bots.push(bot);
  await waitUntil(() => expect(bot.output()).toContain("channel started"), { timeout: 15_000 });
  return bot;
}

const botTexts = (channelId: string) => discord!.messages(channelId).filter((m) => m.author.id === discord!.bot.id).map((m) => m.content).join("\n");

describe("Discord: which server messages the bot answers", () => {
  it("answers a message that does not mention it when discord.access.mentionGate is false", async () => {
    model = await startOpenAIEmulator();
    discord = await startDiscordEmulator();
    model.script({ text: "Here is the summary." });
    const cfg = path.join(mkdtempSync(path.join(tmpdir(), "gh-discord-cfg-")), "config.json");
    writeFileSync(cfg, JSON.stringify({ discord: { access: { mentionGate: false } } }));
    await started(startBotProcess(env({ GATEHOUSE_CONFIG: cfg })));
    await discord.userPosts({ channelId: discord.textChannelId, userId: USER, content: "anyone? summarize things" });
    await waitUntil(() => {
      const all = [...discord!.state.messages.values()].flat().filter((m) => m.author.id === discord!.bot.id);
      expect(all.map((m) => m.content).join("\n")).toContain("Here is the summary.");
    }, { timeout: 15_000 });
  }, 40_000);

  it("answers a follow-up without a mention in a thread a user started, also after a restart", async () => {
    model = await startOpenAIEmulator();
    discord = await startDiscordEmulator();
    model.script({ text: "first answer" }, { text: "second answer" }, { text: "third answer" });
    const first = await started(startBotProcess(env(), { keepDataDir: true }));
    const thread = await discord.userStartsThread(USER, "my thread");
    await discord.userPosts({ channelId: thread, userId: USER, content: `<@${discord.bot.id}> question one` });
    await waitUntil(() => expect(botTexts(thread)).toContain("first answer"), { timeout: 10_000 });
    await discord.userPosts({ channelId: thread, userId: USER, content: "follow-up two" });
    await waitUntil(() => expect(botTexts(thread)).toContain("second answer"), { timeout: 10_000 });
    bots.splice(bots.indexOf(first), 1);
    expect(await first.stop()).toBe(0);
    await started(startBotProcess(env(), { dataDir: first.dataDir }));
    await discord.userPosts({ channelId: thread, userId: USER, content: "follow-up three, after the restart" });
    await waitUntil(() => expect(botTexts(thread)).toContain("third answer"), { timeout: 15_000 });
  }, 60_000);

  it("refuses a slash command in a channel outside allowedChannels, saying so to its sender only", async () => {
    model = await startOpenAIEmulator();
    discord = await startDiscordEmulator();
    const cfg = path.join(mkdtempSync(path.join(tmpdir(), "gh-discord-cfg-")), "config.json");
    writeFileSync(cfg, JSON.stringify({ discord: { registerSlashCommands: true, allowedChannels: ["999999999999999999"] } }));
    await started(startBotProcess(env({ GATEHOUSE_CONFIG: cfg })));
    const interaction = await discord.slashCommand({ channelId: discord.textChannelId, userId: USER, name: "help" });
    await discord.interactionSettled(interaction, 4000, 1000);
    expect(interaction.responses.map((r) => r.content)).toEqual(["I don't work in this channel; ask where I'm set up to answer."]);
    expect(botTexts(discord.textChannelId)).toBe("");
  }, 40_000);

  it("still leaves a user's thread it never answered in to the people in it", async () => {
    model = await startOpenAIEmulator();
    discord = await startDiscordEmulator();
    model.script({ text: "should not be asked" });
    const bot = await started(startBotProcess(env({ LOG_LEVEL: "debug" })));
    const thread = await discord.userStartsThread(USER, "people talking");
    await discord.userPosts({ channelId: thread, userId: USER, content: "just talking among ourselves" });
    await waitUntil(() => expect(bot.output()).toContain("access.not_addressed"), { timeout: 10_000 });
    expect(model.requests).toHaveLength(0);
    expect(botTexts(thread)).toBe("");
  }, 40_000);
});
