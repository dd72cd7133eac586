import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../emulators/telegram/index.ts";
import { waitUntil } from "../support/wait.ts";
import { startBotProcess, type BotProcess } from "./process.ts";
import { runCli } from "../ops/cli-run.ts";

const REPORTS = -100500;
const OPS = -100600;

let model: OpenAIEmulator;
let telegram: TelegramEmulator;
let dir: string;
const bots: BotProcess[] = [];

afterEach(async () => {
  for (const b of bots.splice(0)) await b.stop();
  await telegram?.close();
  await model?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function botWithSchedules(config: Record<string, unknown>): Promise<BotProcess> {
  telegram = await startTelegramEmulator();
  telegram.state.rememberChat({ id: REPORTS, type: "group", title: "reports" });
  telegram.state.rememberChat({ id: OPS, type: "group", title: "ops" });
  dir = mkdtempSync(path.join(tmpdir(), "gh-schedules-"));
  const file = path.join(dir, "gatehouse.json");
  writeFileSync(file, JSON.stringify(config));
  const bot = startBotProcess(
    { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, OPENAI_BASE_URL: model.baseURL, GATEHOUSE_CONFIG: file },
    { dataDir: dir, keepDataDir: true },
  );
  bots.push(bot);
  return bot;
}

const texts = (chat: number) => telegram.botMessages(chat).map((m) => m.text ?? "");

describe("scheduled turns", () => {
  it("delivers a schedule's answer to its chat every tick", async () => {
    model = await startOpenAIEmulator();
    model.setFallback(() => ({ text: "Morning report: all green." }));
    await botWithSchedules({ schedules: [{ name: "morning", cron: "*/2 * * * * *", prompt: "write the morning report", deliverTo: `telegram:${REPORTS}` }] });
    await waitUntil(() => expect(texts(REPORTS).filter((t) => t.includes("Morning report")).length).toBeGreaterThanOrEqual(2), { timeout: 20_000 });
    const asked = model.requests[0]!.body.messages as Array<{ role: string; content: string }>;
    expect(asked.at(-1)!.content).toContain("write the morning report");
  });

  it("denies a call that needs a person when nobody watches, says so in the delivered answer, and writes nothing", async () => {
    model = await startOpenAIEmulator();
    model.setFallback((req) => {
      const msgs = req.body.messages as Array<{ role: string; content: string }>;
      const last = msgs.at(-1)!;
      if (last.role === "tool") return { text: `I could not save it: ${last.content}` };
      return { toolCalls: [{ name: "write_file", arguments: '{"path":"digest.txt","content":"friday"}' }] };
    });
    const bot = await botWithSchedules({ schedules: [{ name: "digest", cron: "*/2 * * * * *", prompt: "save the digest", deliverTo: `telegram:${REPORTS}` }] });
    await waitUntil(() => expect(texts(REPORTS).join("\n")).toMatch(/I could not save it: .*denied: no approval channel here \(nobody watches the scheduled task "digest"/), {
      timeout: 20_000,
    });
    expect(existsSync(path.join(bot.dataDir, "data", "workspace", "digest.txt"))).toBe(false);
  });

  it("asks in approvalsTo when it names a place: an allowed approver's click runs the tool once and the answer lands in deliverTo", async () => {
    model = await startOpenAIEmulator();
    model.script(
      { toolCalls: [{ name: "write_file", arguments: '{"path":"weekly.txt","content":"done","append":true}' }] },
      { text: "Weekly file written." },
    );
    model.setFallback(() => ({ text: "nothing to do" }));
    const bot = await botWithSchedules({
      approval: { approvers: { telegram: ["777"] } },
      schedules: [{ name: "weekly", cron: "*/3 * * * * *", prompt: "write the weekly file", deliverTo: `telegram:${REPORTS}`, approvalsTo: `telegram:${OPS}` }],
    });
    await waitUntil(() => expect(telegram.botMessages(OPS).some((m) => m.reply_markup?.inline_keyboard?.length)).toBe(true), { timeout: 20_000 });
    const card = telegram.botMessages(OPS).find((m) => m.reply_markup?.inline_keyboard?.length)!;
    const approve = card.reply_markup!.inline_keyboard.flat()[0]!.callback_data!;
    const stranger = await telegram.clickButton({ chatId: OPS, messageId: card.message_id, data: approve, from: { id: 888 } }).answered;
    expect(JSON.stringify(stranger)).toMatch(/may not approve/);
    await telegram.clickButton({ chatId: OPS, messageId: card.message_id, data: approve, from: { id: 777 } }).answered;
    await waitUntil(() => expect(texts(REPORTS).join("\n")).toContain("Weekly file written."), { timeout: 15_000 });
    expect(readFileSync(path.join(bot.dataDir, "data", "workspace", "weekly.txt"), "utf8")).toBe("done");
  });

  it("skips a tick while the previous run still goes, without posting notices meant for a person into the report", async () => {
    model = await startOpenAIEmulator();
    model.script({ hang: true });
    model.setFallback(() => ({ text: "Pulse: fine." }));
    const bot = await botWithSchedules({
      model: { timeoutMs: 5000, maxRetries: 0 },
      schedules: [{ name: "pulse", cron: "*/2 * * * * *", prompt: "pulse check", deliverTo: `telegram:${REPORTS}` }],
    });
    await waitUntil(() => expect(texts(REPORTS).join("\n")).toContain("Pulse: fine."), { timeout: 20_000 });
    expect(bot.output()).toMatch(/"event":"schedule\.skipped".*"reason":"the previous run is still going"/);
    expect(texts(REPORTS).join("\n")).not.toMatch(/Queued|Still busy/);
  });

  it("refuses to start with an invalid cron expression, naming the key", async () => {
    model = await startOpenAIEmulator();
    const bot = await botWithSchedules({ schedules: [{ name: "bad", cron: "every morning", prompt: "x", deliverTo: `telegram:${REPORTS}` }] });
    const code = await new Promise<number | null>((r) => bot.child.once("exit", r));
    expect(code).not.toBe(0);
    expect(bot.output()).toMatch(/schedules\.0\.cron: not a valid cron expression/);
  });

  it("starts with a schedule that fires only on 29 February, and lists its next run", async () => {
    model = await startOpenAIEmulator();
    const bot = await botWithSchedules({ schedules: [{ name: "leap", cron: "0 0 29 2 *", prompt: "leap day report", deliverTo: `telegram:${REPORTS}` }] });
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    expect(bot.child.exitCode).toBeNull();
    const env = { GATEHOUSE_CONFIG: path.join(dir, "gatehouse.json"), GATEHOUSE_DATA_DIR: path.join(bot.dataDir, "data"), OPENAI_BASE_URL: model.baseURL };
    expect((await runCli(["schedules", "list"], env)).stdout).toMatch(/^leap .*\n\s+next 2028-02-29T00:00:00/m);
  });

  it("runs a schedule now when asked from the command line, and lists its last run", async () => {
    model = await startOpenAIEmulator();
    model.setFallback(() => ({ text: "Quarterly numbers: up." }));
    const bot = await botWithSchedules({ schedules: [{ name: "quarterly", cron: "0 0 1 1 *", prompt: "the quarterly numbers", deliverTo: `telegram:${REPORTS}` }] });
    await waitUntil(() => expect(telegram.callsOf("getUpdates").length).toBeGreaterThan(0), { timeout: 15_000 });
    const env = { GATEHOUSE_CONFIG: path.join(dir, "gatehouse.json"), GATEHOUSE_DATA_DIR: path.join(bot.dataDir, "data"), OPENAI_BASE_URL: model.baseURL };
    expect((await runCli(["schedules", "run", "nope"], env)).code).toBe(1);
    const asked = await runCli(["schedules", "run", "quarterly"], env);
    expect(asked.code).toBe(0);
    await waitUntil(() => expect(texts(REPORTS).join("\n")).toContain("Quarterly numbers: up."), { timeout: 15_000 });
    await waitUntil(async () => expect((await runCli(["schedules", "list"], env)).stdout).toMatch(/quarterly .*\n.*last \S+ \(done\)/), { timeout: 10_000 });
    const status = await runCli(["status", "--deep"], env);
    expect(status.stdout).toMatch(/Schedules:\s+quarterly: next \S+, last \S+ \(done\)/);
    expect(status.stdout).toMatch(/Largest:\s+telegram:-100500:schedule-quarterly: 2 messages/);

    // With the bot stopped, nobody would take the request: the command says so instead of pretending.
    await bot.stop();
    const stopped = await runCli(["schedules", "run", "quarterly"], env);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/no bot is running on the data folder .*; start it first \(nothing was asked\)/);
  });
});
