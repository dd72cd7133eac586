/**
 * Call prep — measuring. Owns how big a request is and how big it may be: the model's context
 * budget (its window, less room for the answer and the tool specs), the prompt meter (tokens of
 * each message: exact for OpenAI model families through the optional `gpt-tokenizer`, loaded on
 * first use; a conservative estimate for every other model), and pruning, the first remedy when a
 * request would not fit: old tool results shrink to their head and tail, never the current turn's.
 */
import { hash as digestOf } from "node:crypto";
import { LruMap } from "../lru-map.ts";
import type { ChatMessage, ToolSpec } from "../model/types.ts";
import { truncateMiddle } from "./record.ts";

/** The window assumed when neither the config nor the endpoint names one. */
export const DEFAULT_CONTEXT_TOKENS = 32_000;
/** What an old tool result keeps (head and tail, with the cut marker) once pruned. */
export const PRUNED_RESULT_CHARS = 1_200;

/** What a request may take, in tokens. */
export interface ContextBudget {
  /** The model's whole window. */
  windowTokens: number;
  /** Kept free for the answer. */
  answerTokens: number;
  /** Taken by the tool specs offered with the request. */
  toolTokens: number;
  /** What the messages may take: the window less the answer and the tools. */
  promptTokens: number;
}

/**
 * The window to plan with: the smaller of the configured one and the one the endpoint reports
 * (a configured window may be a deliberate limit; the endpoint knows its own), else the default.
 */
export function windowTokens(configured: number | undefined, reported: number | undefined): number {
  if (configured && reported) return Math.min(configured, reported);
  return configured ?? reported ?? DEFAULT_CONTEXT_TOKENS;
}

/** The budget of one request. Room for the answer defaults to an eighth of the window, 256 to 4,096 tokens. */
export function budgetOf(window: number, toolTokens: number, answerReserve?: number): ContextBudget {
  const answerTokens = answerReserve ?? Math.min(4096, Math.max(256, Math.floor(window / 8)));
  return { windowTokens: window, answerTokens, toolTokens, promptTokens: Math.max(0, window - answerTokens - toolTokens) };
}

/** Counts the tokens of a text. */
type Counter = (text: string) => number;

/** The tokenizer file of a model family gpt-tokenizer knows, or undefined for every other model. */
export function encodingFor(model: string): "o200k_base" | "cl100k_base" | undefined {
  const name = model.toLowerCase().replace(/^(openai|azure)\//, "");
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-4o|o[1-9]|gpt-oss)/.test(name)) return "o200k_base";
  if (/^(gpt-4|gpt-3\.5)/.test(name)) return "cl100k_base";
  return undefined;
}

/**
 * A conservative token count for a model whose tokenizer is unknown: a run of Latin letters costs
 * one token per 4 (a case change starts a new run), each digit and symbol one, a line break one,
 * a CJK character one, other letters half. It counts more than o200k, cl100k and the Llama, Qwen
 * and Mistral tokenizers do for prose, code, JSON, logs, hex and ids (by 15–70 %), so a prompt it
 * passes fits; base64 is the one common text it undercounts, which the refusal retry covers.
 */
export function estimateTokens(text: string): number {
  let tokens = 0;
  let run = 0;
  let prevLower = false;
  let lineBreak = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const lower = c >= 97 && c <= 122;
    if (lower || (c >= 65 && c <= 90)) {
      if (!lower && prevLower) {
        tokens += Math.ceil(run / 4);
        run = 0;
      }
      run++;
      prevLower = lower;
      lineBreak = false;
      continue;
    }
    if (run) tokens += Math.ceil(run / 4);
    run = 0;
    prevLower = false;
    if (c === 32) continue; // a space joins the word after it
    if (c === 10 || c === 13 || c === 9) {
      if (!lineBreak) tokens++;
      lineBreak = true;
      continue;
    }
    lineBreak = false;
    if (c < 128 || (c >= 0x2e80 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xd800 && c <= 0xdfff)) tokens++;
    else tokens += 0.5;
  }
  if (run) tokens += Math.ceil(run / 4);
  return Math.ceil(tokens);
}

/** Loads a gpt-tokenizer encoding; undefined when the optional package is not installed. */
async function loadEncoding(encoding: "o200k_base" | "cl100k_base"): Promise<Counter | undefined> {
  try {
    const mod = encoding === "o200k_base" ? await import("gpt-tokenizer/encoding/o200k_base") : await import("gpt-tokenizer/encoding/cl100k_base");
    // Text that looks like a special token (<|endoftext|>) is counted as plain text, as the API sends it.
    const options = { disallowedSpecial: new Set<string>() };
    return (text) => mod.countTokens(text, options);
  } catch {
    return undefined;
  }
}

/** Per-message framing a chat template adds (role markers, separators), and per tool call. */
const MESSAGE_OVERHEAD = 4;
const CALL_OVERHEAD = 8;
export const REPLY_PRIMING = 3;
/** Texts shorter than this are counted again rather than looked up. */
const CACHED_FROM_CHARS = 24;
/**
 * With the estimate, texts up to this long are counted again too: estimating them costs less than
 * looking them up (a text new to the process is hashed for the lookup anyway).
 */
const ESTIMATED_FROM_CHARS = 512;
/** Texts up to this long are their own cache key; longer ones are keyed by a hash (the cache must stay small). */
const KEYED_BY_TEXT_CHARS = 512;

/**
 * Measures prompts for one model. Counts are cached: by message object (the next request of the
 * same turn sends the same messages) and by content (a history loaded again from the store for the
 * next turn), so a long tool result is counted once, not on every request of every later turn.
 * `scale` grows when the endpoint refused a prompt the meter said would fit, so the next estimates
 * leave the margin that was missing.
 */
export class PromptMeter {
  readonly exact: boolean;
  scale = 1;
  readonly #count: Counter;
  readonly #cache = new LruMap<string, number>({ max: 4096 });
  // Messages are never changed once made (pruning makes new ones), so a count stays true for the object.
  readonly #byMessage = new WeakMap<ChatMessage, number>();
  readonly #bySpec = new WeakMap<ToolSpec, number>();

  constructor(count: Counter | undefined) {
    this.exact = count !== undefined;
    this.#count = count ?? estimateTokens;
  }

  /** Tokens of a text (unscaled). */
  text(text: string): number {
    if (text.length < (this.exact ? CACHED_FROM_CHARS : ESTIMATED_FROM_CHARS)) return this.#count(text);
    const key = text.length <= KEYED_BY_TEXT_CHARS ? text : `${text.length}:${digestOf("sha1", text, "base64")}`;
    let n = this.#cache.get(key);
    if (n === undefined) {
      n = this.#count(text);
      this.#cache.set(key, n);
    }
    return n;
  }

  /** Tokens of one message as sent: content, tool calls, provider fields and framing. */
  message(m: ChatMessage): number {
    let n = this.#byMessage.get(m);
    if (n === undefined) {
      n = MESSAGE_OVERHEAD + (m.content ? this.text(m.content) : 0);
      if (m.role === "assistant") {
        for (const call of m.tool_calls ?? []) n += CALL_OVERHEAD + this.text(call.function.name) + this.text(call.function.arguments);
        if (m.provider) n += this.text(JSON.stringify(m.provider));
      }
      this.#byMessage.set(m, n);
    }
    return Math.ceil(n * this.scale);
  }

  /** Tokens of a request's messages, with the reply's priming. */
  messages(messages: ChatMessage[]): number {
    let n = REPLY_PRIMING;
    for (const m of messages) n += this.message(m);
    return n;
  }

  /**
   * Tokens the tool specs take (servers render them into the prompt): counted per spec, and kept for
   * the spec object (a tool's spec is built once and offered with every request).
   */
  tools(specs: ToolSpec[]): number {
    if (!specs.length) return 0;
    let n = 0;
    for (const spec of specs) {
      let count = this.#bySpec.get(spec);
      if (count === undefined) {
        count = this.#count(JSON.stringify(spec)) + CALL_OVERHEAD;
        this.#bySpec.set(spec, count);
      }
      n += count;
    }
    return Math.ceil(n * this.scale);
  }
}

/**
 * The tokens of a list that only grows (a turn's messages, measured before each of its requests):
 * counted on from where the last count stopped, while it is the same list on the same meter and scale.
 */
export class AppendedCount {
  #list?: ChatMessage[];
  #meter?: PromptMeter;
  #scale = 0;
  #counted = 0;
  #tokens = 0;

  of(meter: PromptMeter, list: ChatMessage[]): number {
    const grown = list === this.#list && meter === this.#meter && meter.scale === this.#scale && list.length >= this.#counted;
    if (!grown) {
      this.#list = list;
      this.#meter = meter;
      this.#scale = meter.scale;
      this.#counted = 0;
      this.#tokens = 0;
    }
    for (; this.#counted < list.length; this.#counted++) this.#tokens += meter.message(list[this.#counted]!);
    return this.#tokens;
  }
}

/** A new meter for a model, with an empty cache (the tokenizer module itself loads once). */
export async function createMeter(model: string): Promise<PromptMeter> {
  const encoding = encodingFor(model);
  return new PromptMeter(encoding ? await loadEncoding(encoding) : undefined);
}

const meters = new Map<string, Promise<PromptMeter>>();

/** The meter for a model: one per model name in the process, so its counts are cached across turns. */
export function meterFor(model: string): Promise<PromptMeter> {
  let meter = meters.get(model);
  if (!meter) {
    meter = createMeter(model);
    meters.set(model, meter);
  }
  return meter;
}

/** What pruning did. */
export interface Pruned {
  messages: ChatMessage[];
  /** How many tool results were shortened. */
  results: number;
  tokens: number;
}

/**
 * Shortens the tool results of `history` (the turns before the current one), oldest first, to
 * their head and tail until the whole request — `fixedTokens` for the parts that stay as they are —
 * fits `budget`. The calls stay; each result stays beside its call. The input is not changed.
 */
export function pruneToolResults(history: ChatMessage[], fixedTokens: number, budget: number, meter: PromptMeter): Pruned {
  const messages = [...history];
  let tokens = fixedTokens + meter.messages(history) - REPLY_PRIMING;
  let results = 0;
  for (let i = 0; i < messages.length && tokens > budget; i++) {
    const m = messages[i]!;
    if (m.role !== "tool" || m.content.length <= PRUNED_RESULT_CHARS) continue;
    const shorter: ChatMessage = { ...m, content: truncateMiddle(m.content, PRUNED_RESULT_CHARS) };
    tokens += meter.message(shorter) - meter.message(m);
    messages[i] = shorter;
    results++;
  }
  return { messages, results, tokens };
}
