import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { buttonsOf, startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";
import { startDiscordEmulator, type DiscordEmulator } from "../emulators/discord/index.ts";
import { startPostgres, type PostgresServer } from "../support/postgres.ts";
import { freePort } from "../support/free-port.ts";
import { lastUserText, routeModel } from "../support/scenario.ts";
import { waitUntil } from "../support/wait.ts";
import { FIXTURE_SERVER } from "../mcp/helpers.ts";
import { startBotProcess, type BotProcess } from "./process.ts";

const CHANNEL = "C0REPLICAS";
const SIGNING_SECRET = "replica-signing-secret";

let pgServer: PostgresServer;
let model: OpenAIEmulator;
let slack: SlackEmulator;
let shared: string;
let discord: DiscordEmulator | undefined;
let databaseUrl: string;
const bots: BotProcess[] = [];

beforeAll(async () => {
  pgServer = await startPostgres();
}, 60_000);
afterAll(async () => pgServer?.stop());
afterEach(async () => {
  for (const b of bots.splice(0)) await b.stop();
  await slack?.close();
  await discord?.close();
  discord = undefined;
  await model?.close();
  if (shared) rmSync(shared, { recursive: true, force: true });
});

interface Replica {
  bot: BotProcess;
  port: number;
  /** Points the emulator's event deliveries at this replica's endpoint. */
  use(): void;
}

/**
 * Starts `n` replicas as `npm start` does, on one fresh database, each with its own data folder and
 * port; `clockSkewMs[i]` puts replica i's clock off by that much.
 */
async function replicas(n: number, extraConfig: Record<string, unknown> = {}, clockSkewMs: number[] = []): Promise<Replica[]> {
  databaseUrl = await pgServer.createDatabase();
  slack = await startSlackEmulator();
  slack.world.channels.add(CHANNEL);
  shared = mkdtempSync(path.join(tmpdir(), "gh-replicas-"));
  const config = path.join(shared, "gatehouse.json");
  writeFileSync(config, JSON.stringify({ gateway: { leaseTtlMs: 2000 }, ...extraConfig }));
  const started: Replica[] = [];
  for (let i = 0; i < n; i++) {
    const port = await freePort();
    const bot = startBotProcess({
      SLACK_BOT_TOKEN: slack.botToken, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.apiUrl,
      OPENAI_BASE_URL: model.baseURL, DATABASE_URL: databaseUrl, PORT: String(port), GATEHOUSE_CONFIG: config,
    }, { clockSkewMs: clockSkewMs[i] });
    bots.push(bot);
    started.push({ bot, port, use: () => slack.useHttp({ url: `http://127.0.0.1:${port}/slack/events`, signingSecret: SIGNING_SECRET }) });
  }
  for (const r of started) {
    await waitUntil(async () => expect((await fetch(`http://127.0.0.1:${r.port}/slack/events`, { method: "POST" }).catch(() => undefined))?.status).toBeDefined(), {
      timeout: 20_000,
    });
  }
  return started;
}

/**
 * The replica whose lease the only leased session is under (its owner id carries the process id):
 * whichever took the thread, the one the event reached or the other one's sweep.
 */
async function leaseHolder(among: Replica[]): Promise<Replica> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ owner: string }>("SELECT owner FROM session_leases WHERE expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint");
    const holder = among.find((r) => rows.some((row) => row.owner.split(":")[1] === String(r.bot.child.pid)));
    if (!holder) throw new Error(`no replica holds a lease (owners: ${rows.map((r) => r.owner).join(", ") || "none"})`);
    return holder;
  } finally {
    await client.end();
  }
}

const botTexts = (threadTs: string) => slack.messagesIn(CHANNEL, threadTs).filter((m) => m.user === slack.botUserId).map((m) => m.text);
const mention = (text: string) => `<@${slack.botUserId}> ${text}`;

describe("several replicas on one PostgreSQL database", () => {
  it("answers once when a Slack event reaches replica A and its retry reaches replica B", async () => {
    model = await startOpenAIEmulator();
    routeModel(model, []);
    const [a, b] = await replicas(2);
    a!.use();
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: mention("what is new") });
    b!.use();
    await slack.redeliverLast();
    await waitUntil(() => expect(botTexts(message.ts).join("\n")).toMatch(/answer to: .*what is new/), { timeout: 15_000 });
    await new Promise((r) => setTimeout(r, 1500));
    expect(botTexts(message.ts).filter((t) => /answer to: .*what is new/.test(t))).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
  });

  it("answers two messages of one thread that land on A and B at the same moment in order, once each", async () => {
    model = await startOpenAIEmulator();
    routeModel(model, []);
    const [a, b] = await replicas(2);
    a!.use();
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: mention("start a thread") });
    await waitUntil(() => expect(botTexts(message.ts).join("\n")).toMatch(/answer to: .*start a thread/), { timeout: 15_000 });
    a!.use();
    const first = slack.userPosts({ user: "U0ALICE", channel: CHANNEL, threadTs: message.ts, text: mention("first follow-up") });
    b!.use();
    const second = slack.userPosts({ user: "U0ALICE", channel: CHANNEL, threadTs: message.ts, text: mention("second follow-up") });
    await Promise.all([first, second]);
    await waitUntil(() => expect(botTexts(message.ts).filter((t) => /answer to: .*follow-up/.test(t))).toHaveLength(2), { timeout: 20_000 });
    await new Promise((r) => setTimeout(r, 1500));
    const answers = botTexts(message.ts).filter((t) => /answer to: .*follow-up/.test(t));
    expect(answers).toHaveLength(2);
    // The later turn saw the earlier one's question and answer: one turn at a time, in inbox order.
    const later = model.requests.at(-1)!.body.messages as Array<{ role: string; content: string | null }>;
    const earlierWord = answers[0]!.includes("first") ? "first" : "second";
    expect(later.some((m) => m.role === "assistant" && m.content?.includes(`${earlierWord} follow-up`))).toBe(true);
    expect(model.requests).toHaveLength(3);
  });

  it("answers a thread's queued messages in the order they came when one replica's clock is half a minute behind", async () => {
    model = await startOpenAIEmulator();
    // The thread's first question keeps its turn busy (the model never answers it) until the model timeout.
    model.setFallback((request) => (lastUserText(request).includes("hold on") ? { hang: true } : { text: `answer to: ${lastUserText(request)}` }));
    const [a, b] = await replicas(2, { gateway: { leaseTtlMs: 2000 }, model: { timeoutMs: 5000, maxRetries: 0 } }, [0, -30_000]);
    a!.use();
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: mention("hold on") });
    await waitUntil(() => expect(model.requests).toHaveLength(1), { timeout: 15_000 });
    const queued = () => botTexts(message.ts).filter((t) => t.startsWith("⏳ Queued"));
    await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, threadTs: message.ts, text: mention("first follow-up") });
    await waitUntil(() => expect(queued()).toHaveLength(1), { timeout: 10_000 });
    b!.use();
    await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, threadTs: message.ts, text: mention("second follow-up") });
    await waitUntil(() => expect(queued()).toHaveLength(2), { timeout: 10_000 });
    const answers = () => botTexts(message.ts).filter((t) => /answer to: .*follow-up/.test(t));
    await waitUntil(() => expect(answers()).toHaveLength(2), { timeout: 30_000 });
    expect(answers()[0]).toMatch(/first follow-up/);
    expect(answers()[1]).toMatch(/second follow-up/);
    // Neither message was taken for lost by the other replica (it would have started over).
    expect(botTexts(message.ts).join("\n")).not.toMatch(/restarted|not finished/);
    await new Promise((r) => setTimeout(r, 1000));
    expect(answers()).toHaveLength(2);
  });

  it("keeps a card live until its timeout when another replica's clock is half a minute ahead", async () => {
    model = await startOpenAIEmulator();
    model.script(
      { toolCalls: [{ name: "write_file", arguments: '{"path":"clock.txt","content":"on time"}' }] },
      { text: "clock.txt is written" },
    );
    const pair = await replicas(2, { gateway: { leaseTtlMs: 2000 }, approval: { timeoutMs: 20_000 } }, [0, 30_000]);
    pair[0]!.use();
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: mention("write clock.txt") });
    const thread = () => slack.messagesIn(CHANNEL, message.ts).filter((m) => m.user === slack.botUserId);
    await waitUntil(() => expect(thread().some((m) => buttonsOf(m.blocks).length === 4)).toBe(true), { timeout: 15_000 });
    const card = thread().find((m) => buttonsOf(m.blocks).length === 4)!;
    // Both replicas sweep for overdue cards every second: the one ahead must not take this one for expired.
    await new Promise((r) => setTimeout(r, 3000));
    expect(buttonsOf(slack.world.findMessage(CHANNEL, card.ts)!.blocks)).toHaveLength(4);
    pair[1]!.use();
    await slack.click(CHANNEL, card.ts, "U0ALICE", buttonsOf(card.blocks).find((x) => /approve/i.test(x.label))!.value);
    await waitUntil(() => expect(botTexts(message.ts).join("\n")).toMatch(/clock\.txt is written/), { timeout: 15_000 });
    expect(botTexts(message.ts).join("\n")).not.toMatch(/Expired|timed out/);
  });

  it("runs the tool once when a card posted by A is clicked through B, even with a double click split across both", async () => {
    model = await startOpenAIEmulator();
    model.script(
      { toolCalls: [{ name: "write_file", arguments: '{"path":"log.txt","content":"x","append":true}' }] },
      { text: "log.txt got its line" },
    );
    const [a, b] = await replicas(2);
    a!.use();
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: mention("append to the log") });
    const thread = () => slack.messagesIn(CHANNEL, message.ts).filter((m) => m.user === slack.botUserId);
    await waitUntil(() => expect(thread().some((m) => buttonsOf(m.blocks).length === 4)).toBe(true), { timeout: 15_000 });
    const card = thread().find((m) => buttonsOf(m.blocks).length === 4)!;
    const approve = buttonsOf(card.blocks).find((x) => /approve/i.test(x.label))!;
    b!.use();
    const one = slack.click(CHANNEL, card.ts, "U0ALICE", approve.value);
    a!.use();
    const two = slack.click(CHANNEL, card.ts, "U0ALICE", approve.value);
    await Promise.all([one, two]);
    await waitUntil(() => expect(botTexts(message.ts).join("\n")).toMatch(/log\.txt got its line/), { timeout: 15_000 });
    await new Promise((r) => setTimeout(r, 1500));
    const written = [a!, b!].map((r) => {
      try {
        return readFileSync(path.join(r.bot.dataDir, "data", "workspace", "log.txt"), "utf8");
      } catch {
        return "";
      }
    });
    expect(written.join("")).toBe("x");
    expect(botTexts(message.ts).filter((t) => /log\.txt got its line/.test(t))).toHaveLength(1);
  });

  it("passes on an answer to an MCP server's question that reaches the replica not running the call", async () => {
    model = await startOpenAIEmulator();
    model.script({ toolCalls: [{ name: "fx__deploy", arguments: "{}" }] }, { text: "the deploy tool has answered" });
    const pair = await replicas(2, { mcp: { servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnlyTools: ["deploy"] } } } });
    pair[0]!.use();
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: mention("deploy the build") });
    const thread = () => slack.messagesIn(CHANNEL, message.ts).filter((m) => m.user === slack.botUserId);
    const withButton = (label: string) => thread().find((m) => buttonsOf(m.blocks).some((x) => x.label.includes(label)));
    await waitUntil(() => expect(withButton("production")).toBeDefined(), { timeout: 20_000 });
    // Every answer goes through the replica that is not running the call.
    const asking = await leaseHolder(pair);
    const elsewhere = pair.find((r) => r !== asking)!;
    elsewhere.use();
    const choice = withButton("production")!;
    await slack.click(CHANNEL, choice.ts, "U0ALICE", buttonsOf(choice.blocks).find((x) => x.label.includes("production"))!.value);
    await waitUntil(() => expect(thread().some((m) => m.text.includes("Release note") || JSON.stringify(m.blocks ?? []).includes("Release note"))).toBe(true), { timeout: 10_000 });
    await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: "first release", threadTs: message.ts });
    await waitUntil(() => expect(withButton("Send")).toBeDefined(), { timeout: 10_000 });
    const review = withButton("Send")!;
    await slack.click(CHANNEL, review.ts, "U0ALICE", buttonsOf(review.blocks).find((x) => x.label.includes("Send"))!.value);
    await waitUntil(() => expect(botTexts(message.ts).join("\n")).toMatch(/the deploy tool has answered/), { timeout: 15_000 });
    const results = (model.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "tool");
    expect(results.at(-1)!.content).toContain("deploying to production: first release");
  });

  it("holds two threads per turn slot on each replica and leaves the rest of a burst in the inbox for whichever has room first", async () => {
    model = await startOpenAIEmulator();
    model.setFallback(() => ({ hang: true }));
    const pair = await replicas(2, { gateway: { leaseTtlMs: 2000, maxConcurrentTurns: 1 } });
    pair[0]!.use();
    await Promise.all(["one", "two", "three", "four", "five", "six"].map((n) => slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: mention(`think about ${n}`) })));
    // Each replica computes one turn and lines up one more (B takes its two from A's burst at its
    // next sweep); the last two threads wait, unleased, for the first replica with room.
    await waitUntil(() => expect(model.requests).toHaveLength(2), { timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 1500));
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ owner: string }>("SELECT owner FROM session_leases WHERE expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint");
      expect(pair.map((r) => rows.filter((row) => row.owner.split(":")[1] === String(r.bot.child.pid)).length)).toEqual([2, 2]);
      const waiting = await client.query<{ n: string }>("SELECT count(DISTINCT session_key) AS n FROM inbox");
      expect(Number(waiting.rows[0]!.n)).toBe(2);
    } finally {
      await client.end();
    }
    expect(model.requests).toHaveLength(2);
  });

  it("stops a turn computing on A within 2 s when /stop reaches B", async () => {
    model = await startOpenAIEmulator();
    model.script({ hang: true });
    const [a, b] = await replicas(2);
    a!.use();
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: mention("think for a long time") });
    await waitUntil(() => expect(model.requests).toHaveLength(1), { timeout: 15_000 });
    b!.use();
    const asked = Date.now();
    await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, threadTs: message.ts, text: mention("/stop") });
    await waitUntil(() => expect(botTexts(message.ts).join("\n")).toMatch(/Stopped\./), { timeout: 5000 });
    expect(Date.now() - asked).toBeLessThan(2500);
    expect(botTexts(message.ts).join("\n")).toMatch(/another replica/);
  });

  /**
   * Two replicas; "summarize the incident" is posted through the first, and the replica computing its
   * turn (usually the one the event reached, but the other one's sweep may have taken the thread
   * first) is killed during its model request, before the turn's first checkpoint.
   */
  async function killedMidTurn() {
    model = await startOpenAIEmulator();
    model.script({ hang: true });
    routeModel(model, []);
    const pair = await replicas(2);
    pair[0]!.use();
    const { message } = await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, text: mention("summarize the incident") });
    await waitUntil(() => expect(model.requests).toHaveLength(1), { timeout: 15_000 });
    const a = await leaseHolder(pair);
    a.bot.child.kill("SIGKILL");
    await new Promise((r) => a.bot.child.once("exit", r));
    return { message, b: pair.find((r) => r !== a)! };
  }

  it("when A dies before the turn's first checkpoint, B starts the message over, answers it once, and keeps answering", async () => {
    const { message, b } = await killedMidTurn();
    await waitUntil(() => expect(botTexts(message.ts).join("\n")).toMatch(/answer to: .*summarize the incident/), { timeout: 45_000 });
    expect(botTexts(message.ts).join("\n")).toMatch(/starting it over/);
    b.use();
    const next = await slack.userPosts({ user: "U0BOB", channel: CHANNEL, text: mention("are you there") });
    await waitUntil(() => expect(botTexts(next.message.ts).join("\n")).toMatch(/answer to: .*are you there/), { timeout: 15_000 });
    expect(botTexts(message.ts).filter((t) => /answer to: .*summarize the incident/.test(t))).toHaveLength(1);
    expect(botTexts(message.ts).join("\n")).not.toMatch(/not finished/);
  });

  it("when A dies mid-turn and a follow-up in the thread reaches B, B answers the first message before the follow-up", async () => {
    const { message, b } = await killedMidTurn();
    // Sent while the dead replica's lease still runs: it waits in the thread's inbox.
    b.use();
    await slack.userPosts({ user: "U0ALICE", channel: CHANNEL, threadTs: message.ts, text: mention("and the timeline") });
    const answers = () => botTexts(message.ts).filter((t) => /answer to: /.test(t));
    await waitUntil(() => expect(answers()).toHaveLength(2), { timeout: 30_000 });
    expect(answers()[0]).toMatch(/summarize the incident/);
    expect(answers()[1]).toMatch(/and the timeline/);
    // The follow-up's turn saw the first message and its answer.
    const followUp = model.requests.at(-1)!.body.messages as Array<{ role: string; content: string | null }>;
    expect(followUp.some((m) => m.role === "assistant" && m.content?.includes("summarize the incident"))).toBe(true);
  });

  it("keeps one Discord gateway connection: when its holder is killed, another replica connects and answers the next mention", async () => {
    model = await startOpenAIEmulator();
    routeModel(model, []);
    discord = await startDiscordEmulator();
    const databaseUrl = await pgServer.createDatabase();
    shared = mkdtempSync(path.join(tmpdir(), "gh-replicas-"));
    const config = path.join(shared, "gatehouse.json");
    writeFileSync(config, JSON.stringify({ gateway: { leaseTtlMs: 2000 } }));
    const env = { DISCORD_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl, OPENAI_BASE_URL: model.baseURL, DATABASE_URL: databaseUrl, GATEHOUSE_CONFIG: config };
    const pair = [startBotProcess(env), startBotProcess(env)];
    bots.push(...pair);
    const holds = (b: BotProcess) => b.output().includes("holds the gateway lease");
    await waitUntil(() => expect(pair.filter(holds)).toHaveLength(1), { timeout: 20_000 });
    await new Promise((r) => setTimeout(r, 1500));
    expect(pair.filter(holds)).toHaveLength(1);
    expect(discord.gateway.handshakes.filter((h) => h.op === "identify")).toHaveLength(1);

    const holder = pair.find(holds)!;
    const standby = pair.find((b) => b !== holder)!;
    holder.child.kill("SIGKILL");
    await new Promise((r) => holder.child.once("exit", r));
    await waitUntil(() => expect(holds(standby)).toBe(true), { timeout: 15_000 });
    const user = "200000000000000001";
    const posted = await discord.userPosts({ channelId: discord.textChannelId, userId: user, content: `<@${discord.bot.id}> are you still there` });
    const answers = () => discord!.messages(posted.id).filter((m) => m.author.id === discord!.bot.id).map((m) => m.content);
    await waitUntil(() => expect(answers().join("\n")).toMatch(/answer to: .*are you still there/), { timeout: 15_000 });
  });

  it("runs each tick of a schedule once, however many replicas run", async () => {
    model = await startOpenAIEmulator();
    model.setFallback(() => ({ text: "tick report" }));
    const from = Date.now();
    const pair = await replicas(2, { schedules: [{ name: "pulse", cron: "*/2 * * * * *", prompt: "pulse check", deliverTo: `slack:${CHANNEL}` }] });
    await new Promise((r) => setTimeout(r, 8500));
    // Every tick that fired by the time the reports are counted (including one in the last moment).
    const ticks = Math.floor((Date.now() - from) / 2000) + 1;
    const reports = slack.world.messages.filter((m) => m.channel === CHANNEL && m.user === slack.botUserId && /tick report/.test(m.text));
    expect(reports.length).toBeGreaterThanOrEqual(2);
    // Both replicas fire every tick: answered twice, there would be about twice as many reports as ticks.
    expect(reports.length).toBeLessThanOrEqual(ticks);
    expect(model.requests.length).toBeLessThanOrEqual(ticks);
    expect(pair.map((r) => r.bot.output()).join("\n")).toMatch(/"event":"dedupe\.dropped"/);
  });
});
