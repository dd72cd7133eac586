/**
 * Call prep — compaction. Owns the session's checkpoint: a summary of its oldest turns, written by
 * the model in tool-less requests, that stands in for them so that a long thread keeps fitting the
 * window. The checkpoint is kept in the store (`compaction:<sessionKey>`) with the number of
 * messages it covers and a fingerprint of the last one, so the next request — in this process or
 * after a restart — starts from it instead of summarizing again. Also the session's context gauge
 * (`context:<sessionKey>`, what /status shows) and a pending `/compact` request.
 */
import { LruMap } from "../lru-map.ts";
import { createHash } from "node:crypto";
import { z } from "zod";
import type { ChatMessage } from "../model/types.ts";
import type { Store } from "../store/store.ts";
import type { PromptMeter } from "./context-budget.ts";
import { truncateMiddle } from "./record.ts";
import type { ResolvedExecution } from "./types.ts";

const CHECKPOINT = "compaction:";
const GAUGE = "context:";
const REQUEST = "compaction.request:";

/** A session's compaction checkpoint as stored (versioned: old ones keep loading). */
const CheckpointV1 = z.object({
  version: z.literal(1),
  /** The summary of every message up to and including the anchor. */
  summary: z.string(),
  /** How many history messages the summary covers, over all compactions. */
  covers: z.number().int().nonnegative(),
  /** Fingerprint of the last covered message (and of the one before it), to find it in a loaded history. */
  anchor: z.string(),
  before: z.string().optional(),
  compactions: z.number().int().positive(),
  at: z.number(),
});
export type CompactionCheckpoint = z.infer<typeof CheckpointV1>;

/** What a turn's first request needs of the session's context (see loadContext). */
export interface SessionContext {
  checkpoint?: CompactionCheckpoint;
  /** A `/compact` waits: this turn compacts first. */
  requested: boolean;
}

/** How full the session's context was at its last request (for /status). */
const GaugeV1 = z.object({
  version: z.literal(1),
  usedTokens: z.number().int().nonnegative(),
  windowTokens: z.number().int().positive(),
  compactions: z.number().int().nonnegative(),
  at: z.number(),
});
export type ContextGauge = z.infer<typeof GaugeV1>;

async function readJson<T>(store: Store, key: string, schema: z.ZodType<T>): Promise<T | undefined> {
  return parsedJson(await store.getValue(key), schema);
}

function parsedJson<T>(raw: string | undefined, schema: z.ZodType<T>): T | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The session's checkpoint; undefined when it has none (or one this version cannot read). */
export function loadCheckpoint(store: Store, sessionKey: string): Promise<CompactionCheckpoint | undefined> {
  return readJson(store, `${CHECKPOINT}${sessionKey}`, CheckpointV1);
}

/**
 * What a turn's first request needs to know of the session's context, in one read: its checkpoint,
 * and whether a `/compact` waits (the turn that acts on it takes it: takeCompactRequest).
 */
export async function loadContext(store: Store, sessionKey: string): Promise<SessionContext> {
  const checkpointKey = `${CHECKPOINT}${sessionKey}`;
  const requestKey = `${REQUEST}${sessionKey}`;
  const values = await store.getValues([checkpointKey, requestKey]);
  return { checkpoint: parsedJson(values.get(checkpointKey), CheckpointV1), requested: values.has(requestKey) };
}

/** Takes the session's waiting `/compact` (so that one `/compact` compacts once). */
export async function takeCompactRequest(store: Store, sessionKey: string): Promise<void> {
  await store.deleteValue(`${REQUEST}${sessionKey}`);
}

export async function saveCheckpoint(store: Store, sessionKey: string, checkpoint: CompactionCheckpoint): Promise<void> {
  await store.setValue(`${CHECKPOINT}${sessionKey}`, JSON.stringify(checkpoint));
}

/**
 * The gauge last written per session, per store, so that a session's next turns write it again only
 * once it moved (most turns add little to a conversation). Bounded: a session forgotten here is
 * written once more.
 */
const savedGauges = new WeakMap<Store, LruMap<string, { usedTokens: number; compactions: number }>>();
function savedGaugesOf(store: Store): LruMap<string, { usedTokens: number; compactions: number }> {
  let saved = savedGauges.get(store);
  if (!saved) savedGauges.set(store, (saved = new LruMap({ max: 10_000 })));
  return saved;
}

/** The gauge this process last wrote for the session, if it remembers one. */
export function lastSavedGauge(store: Store, sessionKey: string): { usedTokens: number; compactions: number } | undefined {
  return savedGaugesOf(store).get(sessionKey);
}

/** Keeps the gauge for /status: written with others a moment later (Store.setValueSoon), not by the turn itself. */
export async function saveGauge(store: Store, sessionKey: string, gauge: Omit<ContextGauge, "version">): Promise<void> {
  savedGaugesOf(store).set(sessionKey, { usedTokens: gauge.usedTokens, compactions: gauge.compactions });
  await store.setValueSoon(`${GAUGE}${sessionKey}`, JSON.stringify({ version: 1, ...gauge }));
}

/** Asks for a compaction before the session's next model request (`/compact`). */
export async function requestCompaction(store: Store, sessionKey: string): Promise<void> {
  await store.setValue(`${REQUEST}${sessionKey}`, String(Date.now()));
}

/**
 * `/compact`: compaction needs the model and the session's lane, so the session's next model
 * request carries it out first. Returns what to tell the person.
 */
export async function askForCompaction(store: Store, sessionKey: string): Promise<string> {
  if ((await store.loadHistory(sessionKey, 1)).length === 0) return "There is no earlier conversation here to compact.";
  await requestCompaction(store, sessionKey);
  return "🗜️ I'll summarize the earlier conversation here before answering the next message; from then on the summary stands in for it.";
}

/** Forgets the session's checkpoint, gauge and pending request (`/new`). */
export async function forgetContext(store: Store, sessionKey: string): Promise<void> {
  savedGaugesOf(store).delete(sessionKey);
  for (const prefix of [CHECKPOINT, GAUGE, REQUEST]) await store.deleteValue(`${prefix}${sessionKey}`);
}

/** A window as people say it: 4K, 32K, 128K, 1M. */
export function shortTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  if (tokens >= 1_000_000) return `${Number((tokens / (tokens % 1_048_576 === 0 ? 1_048_576 : 1_000_000)).toFixed(1))}M`;
  return `${Math.round(tokens / (tokens % 1024 === 0 ? 1024 : 1000))}K`;
}

function times(n: number): string {
  return n === 1 ? "once" : n === 2 ? "twice" : `${n} times`;
}

/** "Context 61% of 32K, compacted twice." (for /status) — or undefined before the session's first request. */
export async function contextStatus(store: Store, sessionKey: string): Promise<string | undefined> {
  const gauge = await readJson(store, `${GAUGE}${sessionKey}`, GaugeV1);
  const pending = (await store.getValue(`${REQUEST}${sessionKey}`)) !== undefined ? "; /compact waits for the next message" : "";
  if (!gauge) return pending ? "Compaction waits for the next message." : undefined;
  const percent = Math.min(100, Math.round((gauge.usedTokens / gauge.windowTokens) * 100));
  const compacted = gauge.compactions ? `, compacted ${times(gauge.compactions)}` : "";
  return `Context ${percent}% of ${shortTokens(gauge.windowTokens)}${compacted}${pending}.`;
}

/** A short, stable fingerprint of a message (role, text, calls), unchanged by a trip through the store. */
export function fingerprint(m: ChatMessage): string {
  const calls = m.role === "assistant" ? (m.tool_calls ?? []).map((c) => [c.id, c.function.name, c.function.arguments]) : [];
  const parts = [m.role, m.content ?? "", calls, m.role === "tool" ? m.tool_call_id : ""];
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url").slice(0, 22);
}

/**
 * The loaded history with the checkpoint applied: the messages after the last covered one. When
 * that message is no longer in the history (the history limit moved past it), the whole history
 * is after it. `covered` says how many loaded messages the summary stands in for.
 */
export function afterCheckpoint(history: ChatMessage[], checkpoint: CompactionCheckpoint | undefined): { rest: ChatMessage[]; covered: number } {
  if (!checkpoint) return { rest: history, covered: 0 };
  for (let i = 0; i < history.length; i++) {
    if (fingerprint(history[i]!) !== checkpoint.anchor) continue;
    if (i > 0 && checkpoint.before && fingerprint(history[i - 1]!) !== checkpoint.before) continue;
    return { rest: history.slice(i + 1), covered: i + 1 };
  }
  return { rest: history, covered: 0 };
}

/** The system message carrying the summary after the system prompt (one system message, first, for every server). */
export function withSummary(system: ChatMessage, summary: string | undefined): ChatMessage {
  if (!summary) return system;
  return {
    role: "system",
    content: `${system.content}\n\n[Summary of the earlier conversation; its older messages were compacted to fit the model's context window]\n${summary}`,
  };
}

/** Where each turn of a history starts (at a user message); a tool call and its results are always in one turn. */
export function turnStarts(history: ChatMessage[]): number[] {
  const starts: number[] = [0];
  history.forEach((m, i) => {
    if (i > 0 && m.role === "user") starts.push(i);
  });
  return history.length ? starts : [];
}

/** Renders messages as the transcript the summarizer reads, each tool result cut to its head and tail. */
export function transcriptLines(messages: ChatMessage[]): string[] {
  const toolNames = new Map<string, string>();
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === "user") lines.push(`User: ${m.content}`);
    else if (m.role === "system") lines.push(`System: ${m.content}`);
    else if (m.role === "tool") lines.push(`Result of ${toolNames.get(m.tool_call_id) ?? "a tool"}: ${truncateMiddle(m.content, 1500)}`);
    else {
      if (m.content) lines.push(`Assistant: ${m.content}`);
      for (const call of m.tool_calls ?? []) {
        toolNames.set(call.id, call.function.name);
        lines.push(`Assistant called ${call.function.name} ${truncateMiddle(call.function.arguments, 400)}`);
      }
    }
  }
  return lines;
}

function instructions(words: number): string {
  return (
    "You keep the running summary of a chat between a team and their assistant, so that the conversation can go on " +
    "after its older messages are removed. Fold the new messages into the earlier summary. Keep what was asked and by whom, " +
    "the answers and decisions, the facts found with tools (names, paths, numbers, ids, commands, errors) and what is still open. " +
    `Leave out greetings and raw tool output. Write in the conversation's language, at most ${words} words. ` +
    "Do not call tools; reply with the summary only."
  );
}

/** Options of one summary. */
export interface SummaryInput {
  previous?: string;
  messages: ChatMessage[];
  meter: PromptMeter;
  /** The model's window, and what the summary may take of it. */
  windowTokens: number;
  summaryTokens: number;
  signal: AbortSignal;
}

/**
 * Has the model fold `messages` into the previous summary: one tool-less request, or one per part
 * when the transcript alone would not fit the window. Returns the new summary (never empty).
 */
export async function summarize(exec: ResolvedExecution, input: SummaryInput): Promise<{ summary: string; requests: number }> {
  const { meter, summaryTokens } = input;
  const words = Math.max(60, Math.round(summaryTokens * 0.6));
  const system: ChatMessage = { role: "system", content: instructions(words) };
  // What one request's transcript may take: the window less the instructions, the summaries in and out, and a margin.
  const room = Math.max(200, input.windowTokens - meter.messages([system]) - 2 * summaryTokens - 200);
  const parts: string[][] = [[]];
  let used = 0;
  for (let line of transcriptLines(input.messages)) {
    let tokens = meter.text(line);
    if (tokens > room) {
      line = truncateMiddle(line, Math.floor((line.length * room) / tokens * 0.9));
      tokens = meter.text(line);
    }
    if (used + tokens > room && parts[parts.length - 1]!.length) {
      parts.push([]);
      used = 0;
    }
    parts[parts.length - 1]!.push(line);
    used += tokens;
  }
  let summary = input.previous ?? "";
  for (const part of parts) {
    const user: ChatMessage = {
      role: "user",
      content: `Earlier summary:\n${summary || "(none yet)"}\n\nNew messages to fold in:\n${part.join("\n")}`,
    };
    const reply = await exec.model.complete({ messages: [system, user], tools: [], signal: input.signal });
    const text = reply.text.trim();
    if (text) summary = text;
  }
  if (!summary) summary = `(${input.messages.length} earlier messages were removed to fit the context window; the model wrote no summary of them.)`;
  // A summary far longer than asked for is cut, so that it never crowds out the conversation it serves.
  const limit = summaryTokens * 2;
  const tokens = meter.text(summary);
  if (tokens > limit) summary = truncateMiddle(summary, Math.floor((summary.length * limit) / tokens));
  return { summary, requests: parts.length };
}
