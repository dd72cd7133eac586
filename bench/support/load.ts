/**
 * The load driver of the chat benchmarks: injects private-chat messages into the Telegram
 * emulator all at once, watches the emulator's call record for the answers (a sendMessage whose
 * shown text is the bench model's answer, matched to its question by reply_parameters), and
 * afterwards works out per message: answered or lost, duplicated, latency (injection to the
 * emulator recording the answer), plus every 429 and whether the refused send was ever retried.
 */
import type { ApiCallRecord, TelegramEmulator } from "../../test/emulators/telegram/index.ts";
import type { OpenAIEmulator } from "./emulators.ts";
import { ANSWER_PATTERN } from "./emulators.ts";

export interface InjectedMessage {
  chatId: number;
  messageId: number;
  /** Date.now() when the update was queued. */
  at: number;
}

export interface InjectOptions {
  chats: number;
  perChat: number;
  text: string;
  /** The first user's id; user i is firstUserId + i, in a private chat of the same id. */
  firstUserId: number;
}

/** Queues `chats × perChat` messages at once: every chat's first message, then every chat's second, … */
export function injectPrivateMessages(telegram: TelegramEmulator, o: InjectOptions): InjectedMessage[] {
  const out: InjectedMessage[] = [];
  for (let m = 0; m < o.perChat; m++) {
    for (let c = 0; c < o.chats; c++) {
      const id = o.firstUserId + c;
      const { message } = telegram.userMessage({ text: o.text, from: { id, first_name: `User${c}`, username: `user${id}` } });
      out.push({ chatId: id, messageId: message.message_id, at: Date.now() });
    }
  }
  return out;
}

interface AnswerRecord {
  chatId: number;
  replyTo: number | undefined;
  at: number;
}

function numberOf(v: unknown): number | undefined {
  const n = typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) ? n : undefined;
}

function shownText(call: ApiCallRecord): string | undefined {
  const result = (call.response as { result?: { text?: unknown } } | undefined)?.result;
  return typeof result?.text === "string" ? result.text : undefined;
}

/** Follows the emulators' records while a round runs: answers so far and when the bot last did something. */
export class RoundWatcher {
  readonly answers: AnswerRecord[] = [];
  lastActivityAt = Date.now();
  private callIndex: number;
  private modelRequests: number;
  private readonly telegram: TelegramEmulator;
  private readonly model: OpenAIEmulator;

  constructor(telegram: TelegramEmulator, model: OpenAIEmulator) {
    this.telegram = telegram;
    this.model = model;
    this.callIndex = telegram.calls.length;
    this.modelRequests = model.requests.length;
  }

  scan(): void {
    const calls = this.telegram.calls;
    for (; this.callIndex < calls.length; this.callIndex++) {
      const call = calls[this.callIndex]!;
      // Polls and typing refreshes say nothing about progress.
      if (call.method !== "getUpdates" && call.method !== "sendChatAction") this.lastActivityAt = Math.max(this.lastActivityAt, call.at);
      if (call.method !== "sendMessage" || call.status !== 200) continue;
      const text = shownText(call);
      if (text === undefined || !ANSWER_PATTERN.test(text)) continue;
      const reply = call.params.reply_parameters as { message_id?: unknown } | undefined;
      this.answers.push({ chatId: numberOf(call.params.chat_id) ?? Number.NaN, replyTo: numberOf(reply?.message_id), at: call.at });
    }
    if (this.model.requests.length !== this.modelRequests) {
      this.modelRequests = this.model.requests.length;
      this.lastActivityAt = Date.now();
    }
  }
}

export type EndReason = "complete" | "idle" | "cap" | "exited";

/**
 * Waits until every message has an answer, or the bot did nothing for `idleMs` (its answers are
 * lost), or `capMs` passed since `since`, or `stopIf` says so (the bot exited). Always returns.
 */
export async function waitForAnswers(
  watcher: RoundWatcher,
  injected: readonly InjectedMessage[],
  o: { idleMs: number; capMs: number; since: number; stopIf?: () => boolean },
): Promise<EndReason> {
  const keys = new Set(injected.map((m) => `${m.chatId}:${m.messageId}`));
  const perChat = new Map<number, number>();
  for (const m of injected) perChat.set(m.chatId, (perChat.get(m.chatId) ?? 0) + 1);
  watcher.lastActivityAt = Math.max(watcher.lastActivityAt, o.since);
  for (;;) {
    watcher.scan();
    // Counted per chat (an answer without reply_parameters still counts for its chat).
    const byChat = new Map<number, number>();
    const seen = new Set<string>();
    for (const a of watcher.answers) {
      const key = `${a.chatId}:${a.replyTo}`;
      if (a.replyTo !== undefined && keys.has(key)) {
        if (seen.has(key)) continue;
        seen.add(key);
      }
      byChat.set(a.chatId, (byChat.get(a.chatId) ?? 0) + 1);
    }
    let complete = true;
    for (const [chat, n] of perChat) if ((byChat.get(chat) ?? 0) < n) complete = false;
    if (complete) return "complete";
    const now = Date.now();
    if (now - o.since > o.capMs) return "cap";
    if (now - watcher.lastActivityAt > o.idleMs) return "idle";
    if (o.stopIf?.()) return "exited";
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface AnswerSummary {
  messages: number;
  answered: number;
  lost: number;
  /** Answers beyond the first for the same question. */
  duplicates: number;
  /** ms from injection to the (first) answer, per answered message. */
  latencies: number[];
  /** When the last first-answer arrived (NaN when none did). */
  lastAnswerAt: number;
}

/** Matches answers to questions: by reply_parameters, else to the oldest unanswered question of the chat. */
export function summarizeAnswers(injected: readonly InjectedMessage[], answers: readonly AnswerRecord[]): AnswerSummary {
  const byKey = new Map<string, { msg: InjectedMessage; answers: number[] }>();
  const byChat = new Map<number, Array<{ msg: InjectedMessage; answers: number[] }>>();
  for (const msg of injected) {
    const slot = { msg, answers: [] as number[] };
    byKey.set(`${msg.chatId}:${msg.messageId}`, slot);
    const list = byChat.get(msg.chatId) ?? [];
    list.push(slot);
    byChat.set(msg.chatId, list);
  }
  let strays = 0;
  for (const a of [...answers].sort((x, y) => x.at - y.at)) {
    let slot = a.replyTo !== undefined ? byKey.get(`${a.chatId}:${a.replyTo}`) : undefined;
    if (!slot) {
      const list = byChat.get(a.chatId);
      slot = list?.find((s) => s.answers.length === 0) ?? list?.[list.length - 1];
    }
    if (slot) slot.answers.push(a.at);
    else strays++;
  }
  let answered = 0;
  let duplicates = strays;
  let lastAnswerAt = Number.NaN;
  const latencies: number[] = [];
  for (const slot of byKey.values()) {
    if (slot.answers.length === 0) continue;
    answered++;
    duplicates += slot.answers.length - 1;
    const first = Math.min(...slot.answers);
    latencies.push(first - slot.msg.at);
    lastAnswerAt = Number.isNaN(lastAnswerAt) ? first : Math.max(lastAnswerAt, first);
  }
  return { messages: injected.length, answered, lost: injected.length - answered, duplicates, latencies, lastAnswerAt };
}

export interface RateLimitSummary {
  /** 429 answers to any call. */
  total: number;
  /**
   * 429s to a send or edit whose text never reached the chat afterwards: no later successful send
   * or edit in that chat holds every line of it (so a retry, or a retry merged with other lines,
   * counts as retried). A status message shows the latest state of each step, so a step's
   * "⏳ tool…" line is also carried by a later line that ends that step ("✅ tool (…)", "❌ tool …",
   * "🚫 tool: …"): the status message was sent again, with what had happened meanwhile.
   */
  unretried: number;
  examples: string[];
}

const LIMITED_METHODS = new Set(["sendMessage", "editMessageText"]);

/** Whether a later text holds `line`, or, for a step's "⏳ tool…" line, a line that ends that step. */
function carries(text: string, line: string): boolean {
  if (text.includes(line)) return true;
  const step = /^⏳ ([^\s:]+)/.exec(line)?.[1];
  return step !== undefined && text.split("\n").some((l) => ["✅", "❌", "🚫"].some((mark) => l.startsWith(`${mark} ${step} `) || l.startsWith(`${mark} ${step}:`)));
}

/** Looks at the calls from `fromIndex` on: every 429, and which refused sends never got through later. */
export function summarizeRateLimits(calls: readonly ApiCallRecord[], fromIndex = 0): RateLimitSummary {
  let total = 0;
  const open = new Map<number, Array<{ lines: string[]; question: number | undefined; what: string }>>();
  // Which question each posted message answers (from reply_parameters), so an edit is tied to it too.
  const questionOfPosted = new Map<string, number | undefined>();
  for (let i = fromIndex; i < calls.length; i++) {
    const call = calls[i]!;
    if (call.status === 429) total++;
    if (!LIMITED_METHODS.has(call.method) || typeof call.params.text !== "string") continue;
    const chat = numberOf(call.params.chat_id) ?? Number.NaN;
    const text = call.params.text;
    const question = call.method === "sendMessage"
      ? numberOf((call.params.reply_parameters as { message_id?: unknown } | undefined)?.message_id)
      : questionOfPosted.get(`${chat}:${numberOf(call.params.message_id)}`);
    if (call.status === 429) {
      const list = open.get(chat) ?? [];
      list.push({ lines: text.split("\n").filter((l) => l.trim()), question, what: `${call.method} to chat ${chat}${question !== undefined ? ` (reply to ${question})` : ""}: ${JSON.stringify(text.slice(0, 60))}` });
      open.set(chat, list);
    } else if (call.status === 200) {
      if (call.method === "sendMessage") {
        const posted = numberOf((call.response as { result?: { message_id?: unknown } } | undefined)?.result?.message_id);
        if (posted !== undefined) questionOfPosted.set(`${chat}:${posted}`, question);
      }
      const list = open.get(chat);
      if (!list) continue;
      const sameQuestion = (q: number | undefined) => q === undefined || question === undefined || q === question;
      const rest = list.filter((o) => !(sameQuestion(o.question) && o.lines.every((l) => carries(text, l))));
      if (rest.length) open.set(chat, rest);
      else open.delete(chat);
    }
  }
  const left = [...open.values()].flat();
  return { total, unretried: left.length, examples: left.slice(0, 3).map((o) => o.what) };
}

/** How many calls of each method (except getUpdates) the bot made from `fromIndex` on. */
export function countCalls(calls: readonly ApiCallRecord[], fromIndex = 0): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = fromIndex; i < calls.length; i++) {
    const m = calls[i]!.method;
    if (m !== "getUpdates") out[m] = (out[m] ?? 0) + 1;
  }
  return out;
}

/** Injects a load and waits for its answers (for warming a bot up inside a round); always returns. */
export async function injectAndWait(
  telegram: TelegramEmulator,
  model: OpenAIEmulator,
  load: InjectOptions,
  o: { idleMs?: number; capMs?: number } = {},
): Promise<AnswerSummary & { end: EndReason }> {
  const watcher = new RoundWatcher(telegram, model);
  const since = Date.now();
  const injected = injectPrivateMessages(telegram, load);
  const end = await waitForAnswers(watcher, injected, { idleMs: o.idleMs ?? 10_000, capMs: o.capMs ?? 30_000, since });
  watcher.scan();
  return { ...summarizeAnswers(injected, watcher.answers), end };
}
