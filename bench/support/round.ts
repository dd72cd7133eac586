/**
 * One measured round of a chat benchmark: fresh emulators, a fresh bot process, an optional
 * preparation step (e.g. park approval cards), then all messages injected at once and followed
 * until every answer arrived (or the bot went idle, or the round's cap). Measures throughput,
 * latencies, lost and duplicated answers, 429s, the bot's CPU time and its RSS at the end.
 * Everything it started is stopped before it returns, also when it fails.
 */
import { startBareBot, startGatehouse, type BareBotPlan, type BotKind, type StartedBot } from "./bots.ts";
import { startEmulators, type LimitMode, type OpenAIEmulator, type TelegramEmulator } from "./emulators.ts";
import { countCalls, injectPrivateMessages, RoundWatcher, summarizeAnswers, summarizeRateLimits, waitForAnswers, type EndReason, type InjectOptions } from "./load.ts";
import { fmt, percentile } from "./stats.ts";

export interface RoundContext {
  telegram: TelegramEmulator;
  model: OpenAIEmulator;
  bot: StartedBot;
}

export interface RoundSpec {
  kind: BotKind;
  mode: LimitMode;
  load: InjectOptions;
  /** Required for the bare bot. */
  plan?: BareBotPlan;
  gatehouseEnv?: Record<string, string>;
  /** Rounds end when the bot made no call (other than polls and typing) for this long. */
  idleMs?: number;
  /** ... or after this long since injection. */
  capMs?: number;
  /** Runs after the bot is ready, before the load is injected; its note is kept in the result. */
  prepare?: (ctx: RoundContext) => Promise<string | undefined>;
}

export interface RoundResult {
  kind: BotKind;
  ok: boolean;
  /** Why the round could not run (bot did not start, …). */
  error?: string;
  messages: number;
  answered: number;
  lost: number;
  duplicates: number;
  throughput: number;
  p50: number;
  p99: number;
  latencies: number[];
  /** ms from injection to the last answer (or to the end of the round). */
  elapsedMs: number;
  end: EndReason | "error";
  cpuMs: number;
  cpuPerMessage: number;
  /**
   * CPU of this process (the emulators that serve the bot, the load and the watcher) from the
   * injection to the round's end, per answered message: the work the bot's requests give the
   * platform and the model server. The watcher's polling grows with the round's length.
   */
  emulatorCpuPerMessage: number;
  rssMb: number;
  peakRssMb: number;
  total429: number;
  unretried429: number;
  unretriedExamples: string[];
  calls: Record<string, number>;
  /** Texts the bot sent (sendMessage, 200 or not), digits folded to N: text → count. */
  sentTexts: Map<string, number>;
  /** The calls made to the first chat of the load, in order (method and shown or sent text). */
  firstChatCalls: Array<{ method: string; status: number; text?: string }>;
  /** The body of the round's first model request. */
  firstModelRequest?: Record<string, unknown>;
  startupMs: number;
  prepareNote?: string;
  /** Warn/error lines of the bot's output, grouped: message → count. */
  logs: Map<string, number>;
}

function sentTexts(telegram: TelegramEmulator, fromIndex: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of telegram.calls.slice(fromIndex)) {
    if (c.method !== "sendMessage" || typeof c.params.text !== "string") continue;
    const key = `${c.status === 200 ? "" : `[${c.status}] `}${c.params.text.replace(/\d+/g, "N").slice(0, 80)}`;
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

function callsToChat(telegram: TelegramEmulator, fromIndex: number, chatId: number): RoundResult["firstChatCalls"] {
  return telegram.calls
    .slice(fromIndex)
    .filter((c) => c.method !== "getUpdates" && Number(c.params.chat_id) === chatId)
    .map((c) => ({ method: c.method, status: c.status, ...(typeof c.params.text === "string" ? { text: c.params.text } : {}) }));
}

/** Groups the warn/error lines of a pino (or plain) output by message. */
export function summarizeLogs(output: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of output.split("\n")) {
    if (!line.trim()) continue;
    let key = line.trim().slice(0, 160);
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: unknown };
      if (typeof entry.level === "number" && entry.level < 40) continue;
      const err = typeof entry.err === "string" ? entry.err : (entry.err as { message?: string } | undefined)?.message;
      key = `${entry.msg ?? "(no msg)"}${err ? `: ${String(err).slice(0, 100)}` : ""}`;
    } catch {
      // not JSON: keep the line itself
    }
    key = key.replace(/\d{3,}/g, "N");
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

function failed(spec: RoundSpec, error: unknown): RoundResult {
  return {
    kind: spec.kind, ok: false, error: (error as Error).message, messages: spec.load.chats * spec.load.perChat, answered: 0,
    lost: spec.load.chats * spec.load.perChat, duplicates: 0, throughput: Number.NaN, p50: Number.NaN, p99: Number.NaN, latencies: [],
    elapsedMs: Number.NaN, end: "error", cpuMs: Number.NaN, cpuPerMessage: Number.NaN, emulatorCpuPerMessage: Number.NaN, rssMb: Number.NaN, peakRssMb: Number.NaN,
    total429: 0, unretried429: 0, unretriedExamples: [], calls: {}, sentTexts: new Map(), firstChatCalls: [], startupMs: Number.NaN, logs: new Map(),
  };
}

export async function runRound(spec: RoundSpec): Promise<RoundResult> {
  const emulators = await startEmulators(spec.mode);
  const { telegram, model } = emulators;
  let bot: StartedBot | undefined;
  try {
    try {
      bot = spec.kind === "gatehouse"
        ? await startGatehouse(telegram, model, spec.gatehouseEnv ? { extraEnv: spec.gatehouseEnv } : {})
        : await startBareBot(telegram, model, spec.plan ?? { typing: true, progress: "lines" });
    } catch (error) {
      if (spec.kind === "bare") throw error; // the baseline is part of the bench: that is the bench broken
      return failed(spec, error);
    }
    const prepareNote = spec.prepare ? await spec.prepare({ telegram, model, bot }) : undefined;
    const firstCall = telegram.calls.length;
    const firstRequest = model.requests.length;
    const watcher = new RoundWatcher(telegram, model);
    const cpu0 = bot.process.cpuMs();
    const ownCpu0 = process.cpuUsage();
    const since = Date.now();
    const injected = injectPrivateMessages(telegram, spec.load);
    const end = await waitForAnswers(watcher, injected, { idleMs: spec.idleMs ?? 15_000, capMs: spec.capMs ?? 90_000, since, stopIf: () => bot!.process.exited() });
    const endedAt = Date.now();
    const cpuMs = bot.process.cpuMs() - cpu0;
    const ownCpu = process.cpuUsage(ownCpu0);
    const memory = bot.process.memoryMb();
    watcher.scan();
    const answers = summarizeAnswers(injected, watcher.answers);
    // Answers per second while answers came: up to the last one (lost answers are counted apart).
    const elapsedMs = (Number.isFinite(answers.lastAnswerAt) ? answers.lastAnswerAt : endedAt) - since;
    const result: RoundResult = {
      kind: spec.kind,
      ok: true,
      messages: answers.messages,
      answered: answers.answered,
      lost: answers.lost,
      duplicates: answers.duplicates,
      throughput: answers.answered / (elapsedMs / 1000),
      p50: percentile(answers.latencies, 0.5),
      p99: percentile(answers.latencies, 0.99),
      latencies: answers.latencies,
      elapsedMs,
      end,
      cpuMs,
      // Per answered message (the same as per message when nothing was lost).
      cpuPerMessage: answers.answered > 0 ? cpuMs / answers.answered : Number.NaN,
      emulatorCpuPerMessage: answers.answered > 0 ? (ownCpu.user + ownCpu.system) / 1000 / answers.answered : Number.NaN,
      rssMb: memory.rss,
      peakRssMb: memory.peak,
      total429: 0,
      unretried429: 0,
      unretriedExamples: [],
      calls: countCalls(telegram.calls, firstCall),
      sentTexts: sentTexts(telegram, firstCall),
      firstChatCalls: callsToChat(telegram, firstCall, spec.load.firstUserId),
      firstModelRequest: model.requests[firstRequest]?.body as Record<string, unknown> | undefined,
      startupMs: bot.startupMs,
      ...(prepareNote ? { prepareNote } : {}),
      logs: new Map(),
    };
    // A moment for late duplicates (and late retries of refused sends) to show up.
    await new Promise((r) => setTimeout(r, 300));
    watcher.scan();
    result.duplicates = summarizeAnswers(injected, watcher.answers).duplicates;
    const lateLimits = summarizeRateLimits(telegram.calls, firstCall);
    result.total429 = lateLimits.total;
    result.unretried429 = lateLimits.unretried;
    result.unretriedExamples = lateLimits.examples;
    // A cut round leaves work queued; Gatehouse's own shutdown would try to flush it for seconds.
    await bot.process.stop(end === "complete" ? 10_000 : 3_000);
    result.logs = summarizeLogs(bot.process.output());
    bot = undefined;
    return result;
  } finally {
    if (bot) await bot.process.stop(3000);
    await emulators.close();
  }
}

/** One line about a round, for progress output. */
export function describeRound(r: RoundResult): string {
  if (!r.ok) return `${r.kind}: FAILED (${(r.error ?? "").split("\n").filter((l) => l.trim()).slice(0, 2).join(" ")})`;
  const per = (n: number | undefined) => ((n ?? 0) / r.messages).toFixed(2);
  return [
    `${r.kind.padEnd(9)} ${r.answered}/${r.messages} answered in ${(r.elapsedMs / 1000).toFixed(1)} s (${r.throughput.toFixed(1)}/s, end: ${r.end})`,
    `p50 ${fmt(r.p50, 0)} ms p99 ${fmt(r.p99, 0)} ms`,
    `cpu ${fmt(r.cpuPerMessage, 1)} ms/msg (emulators ${fmt(r.emulatorCpuPerMessage, 1)}) rss ${fmt(r.rssMb, 0)} MB`,
    `dup ${r.duplicates} 429s ${r.total429} (unretried ${r.unretried429})`,
    `per msg: send ${per(r.calls.sendMessage)} edit ${per(r.calls.editMessageText)} typing ${per(r.calls.sendChatAction)}`,
    `startup ${r.startupMs} ms`,
  ].join(", ");
}
