/**
 * Call prep — fitting each model request into the model's context window. Owns what a request
 * sends: the system prompt (with the session's summary, if it has one), the history after the
 * compaction checkpoint, and the current turn, whole. Before each request it measures
 * (context-budget.ts); a request that would not fit first has old tool results pruned, then the
 * oldest turns compacted into the summary (compaction.ts). A provider's refusal of a too-long
 * prompt leads to one compaction and one retry, not a failure; when even that does not fit, the
 * turn fails with a message that says so plainly and that /new starts fresh.
 */
import { ModelError, type ChatMessage, type ModelInfo, type ModelReply, type ToolSpec } from "../model/types.ts";
import { AppendedCount, budgetOf, meterFor, PromptMeter, pruneToolResults, REPLY_PRIMING, windowTokens, type ContextBudget } from "./context-budget.ts";
import {
  afterCheckpoint,
  fingerprint,
  loadContext,
  takeCompactRequest,
  saveCheckpoint,
  lastSavedGauge, saveGauge,
  shortTokens,
  summarize,
  turnStarts,
  withSummary,
  type CompactionCheckpoint,
} from "./compaction.ts";
import type { ResolvedExecution, TurnState } from "./types.ts";

/** One request as the turn loop asks for it: the current turn's messages are never cut. */
export interface FitRequest {
  system: ChatMessage;
  /** The current turn: its user message, tool calls and results so far (and any closing request). */
  turn: ChatMessage[];
  tools: ToolSpec[];
  signal: AbortSignal;
}

type Reason = "budget" | "refused" | "requested";

interface Setup {
  meter: PromptMeter;
  /** The model's name, for its exact tokenizer when the estimate comes near the budget. */
  model: string;
  /** The exact tokenizer was looked for (found or not). */
  exactTried: boolean;
  window: number;
  checkpoint?: CompactionCheckpoint;
  /** A `/compact` waits to be carried out. */
  requested: boolean;
  /** The gauge last written for the session (this turn or an earlier one in this process). */
  savedGauge?: { usedTokens: number; compactions: number };
}

interface Built {
  messages: ChatMessage[];
  tokens: number;
  budget: ContextBudget;
}

/** After a compaction, the share of the room left that the history may take, so that the next requests do not compact again at once. */
const COMPACTED_SHARE = 0.5;
/**
 * Below this share of the budget by estimate, a prompt fits: the estimate counts more than the real
 * tokenizers do for everything but base64 (0.79×), so the exact tokenizer — its module is large —
 * is loaded only for conversations that come near the window.
 */
const EXACT_FROM_SHARE = 0.6;
/** The share of the window by which the /status gauge must move before it is written again. */
const GAUGE_STEP = 0.05;
/** The estimating meter each model starts with (one per model: its cache serves every session, its scale learns that model). */
const estimates = new Map<string, PromptMeter>();
function estimateFor(model: string): PromptMeter {
  let meter = estimates.get(model);
  if (!meter) estimates.set(model, (meter = new PromptMeter(undefined)));
  return meter;
}
/** How much more the meter counts after the endpoint refused a prompt it thought would fit (at most 3×). */
const SCALE_STEP = 1.25;

/** Fits and sends the model requests of one turn (one per `advance`): `complete` stands for `exec.model.complete`. */
export class PromptFitter {
  readonly #exec: ResolvedExecution;
  readonly #state: TurnState;
  #setup?: Promise<Setup>;
  /** The history after the checkpoint, for the checkpoint it was found with (the history is fixed for the turn). */
  #after?: { checkpoint?: CompactionCheckpoint; rest: ChatMessage[]; covered: number };
  #summed?: { system: ChatMessage; summary?: string; message: ChatMessage };
  /** The turn's messages only grow from one request to the next: each is counted once. */
  readonly #turnTokens = new AppendedCount();

  constructor(exec: ResolvedExecution, state: TurnState) {
    this.#exec = exec;
    this.#state = state;
  }

  /** Sends one request, fitted; on a context-length refusal compacts once and retries once. */
  async complete(request: FitRequest): Promise<ModelReply> {
    const setup = await (this.#setup ??= this.#load());
    if (setup.requested) {
      setup.requested = false;
      await takeCompactRequest(this.#exec.store, this.#state.sessionKey);
      await this.#compact(setup, request, "requested");
    }
    let built = await this.#fit(setup, request);
    try {
      return await this.#send(setup, request, built);
    } catch (err) {
      if (!(err instanceof ModelError) || err.kind !== "context_length" || request.signal.aborted) throw err;
      const { traceId, sessionKey } = this.#state;
      this.#exec.observer.emit({ event: "context.refused", traceId, sessionKey, sentTokens: built.tokens, windowTokens: setup.window, named: err.windowTokens });
      // The endpoint knows its window better; without a number, the meter undercounted this model.
      if (err.windowTokens && err.windowTokens < setup.window) setup.window = err.windowTokens;
      else setup.meter.scale = Math.min(3, setup.meter.scale * SCALE_STEP);
      if (!(await this.#compact(setup, request, "refused"))) throw this.#overflow(setup, built);
      built = await this.#fit(setup, request);
      try {
        return await this.#send(setup, request, built);
      } catch (again) {
        if (again instanceof ModelError && again.kind === "context_length") throw this.#overflow(setup, built);
        throw again;
      }
    }
  }

  async #load(): Promise<Setup> {
    const exec = this.#exec;
    const key = this.#state.sessionKey;
    const unknown: ModelInfo = { name: "unknown" };
    const [info, { checkpoint, requested }] = await Promise.all([exec.model.describe?.() ?? unknown, this.#state.context ?? loadContext(exec.store, key)]);
    return {
      meter: estimateFor(info.name), model: info.name, exactTried: false,
      window: windowTokens(exec.knobs.contextTokens, info.contextTokens), checkpoint, requested,
      savedGauge: lastSavedGauge(exec.store, key),
    };
  }

  async #send(setup: Setup, request: FitRequest, built: Built): Promise<ModelReply> {
    const reply = await this.#exec.model.complete({ messages: built.messages, tools: request.tools, signal: request.signal });
    const gauge = { usedTokens: built.tokens + built.budget.toolTokens, windowTokens: setup.window, compactions: setup.checkpoint?.compactions ?? 0, at: Date.now() };
    // The gauge only feeds /status: written when it moved by a few percent, and a store hiccup here
    // must not cost the person their answer.
    const last = setup.savedGauge;
    if (!last || last.compactions !== gauge.compactions || Math.abs(gauge.usedTokens - last.usedTokens) > gauge.windowTokens * GAUGE_STEP) {
      setup.savedGauge = gauge;
      await saveGauge(this.#exec.store, this.#state.sessionKey, gauge).catch((err: Error) => this.#exec.log.warn({ err: err.message }, "context gauge not saved"));
    }
    return reply;
  }

  #budget(setup: Setup, request: FitRequest): ContextBudget {
    return budgetOf(setup.window, setup.meter.tools(request.tools), this.#exec.knobs.answerReserveTokens);
  }

  /** The request's messages within the budget: as they are, pruned, or after a compaction. */
  async #fit(setup: Setup, request: FitRequest): Promise<Built> {
    let budget = this.#budget(setup, request);
    let pruned = this.#pruned(setup, request, budget.promptTokens);
    if (!setup.exactTried && pruned.tokens > budget.promptTokens * EXACT_FROM_SHARE) {
      setup.exactTried = true;
      const exact = await meterFor(setup.model);
      if (exact.exact) {
        exact.scale = Math.max(exact.scale, setup.meter.scale);
        setup.meter = exact;
        budget = this.#budget(setup, request);
        pruned = this.#pruned(setup, request, budget.promptTokens);
      }
    }
    if (pruned.tokens > budget.promptTokens) {
      await this.#compact(setup, request, "budget");
      pruned = this.#pruned(setup, request, budget.promptTokens);
      if (pruned.tokens > budget.promptTokens) throw this.#overflow(setup, { tokens: pruned.tokens, budget });
    }
    if (pruned.results) {
      this.#exec.observer.emit({
        event: "context.pruned", traceId: this.#state.traceId, sessionKey: this.#state.sessionKey,
        results: pruned.results, tokens: pruned.tokens, budgetTokens: budget.promptTokens,
      });
    }
    return { messages: [pruned.system, ...pruned.messages, ...request.turn], tokens: pruned.tokens, budget };
  }

  #afterCheckpoint(setup: Setup): { rest: ChatMessage[]; covered: number } {
    if (!this.#after || this.#after.checkpoint !== setup.checkpoint) {
      this.#after = { checkpoint: setup.checkpoint, ...afterCheckpoint(this.#state.history, setup.checkpoint) };
    }
    return this.#after;
  }

  /**
   * Leaves the oldest `count` messages after the checkpoint out of this turn's requests, when they
   * could not be summarized: the turn is answered, and the next one tries the summary again.
   */
  #leaveOut(setup: Setup, count: number): void {
    const after = this.#afterCheckpoint(setup);
    this.#after = { ...after, rest: after.rest.slice(count), covered: after.covered + count };
  }

  /** The system message with the summary: one object per system message and summary, so it is measured once. */
  #withSummary(system: ChatMessage, summary: string | undefined): ChatMessage {
    const last = this.#summed;
    if (last?.system === system && last.summary === summary) return last.message;
    const message = withSummary(system, summary);
    this.#summed = { system, summary, message };
    return message;
  }

  #pruned(setup: Setup, request: FitRequest, budgetTokens: number) {
    const system = this.#withSummary(request.system, setup.checkpoint?.summary);
    const { rest } = this.#afterCheckpoint(setup);
    const fixed = REPLY_PRIMING + setup.meter.message(system) + this.#turnTokens.of(setup.meter, request.turn);
    return { system, ...pruneToolResults(rest, fixed, budgetTokens, setup.meter) };
  }

  /**
   * Folds the oldest turns of the history into the summary: all of them when asked (`/compact`),
   * else as many as needed for the turns kept to take at most half of the room the system prompt,
   * the summary and the current turn leave. False when there is nothing to fold (the history after
   * the checkpoint is empty).
   */
  async #compact(setup: Setup, request: FitRequest, reason: Reason): Promise<boolean> {
    const exec = this.#exec;
    const state = this.#state;
    const { rest, covered } = this.#afterCheckpoint(setup);
    const starts = turnStarts(rest);
    if (!starts.length) return false;
    const budget = this.#budget(setup, request);
    const summaryTokens = Math.min(1500, Math.max(120, Math.floor(budget.promptTokens / 6)));
    const fixed = setup.meter.messages([request.system, ...request.turn]) + summaryTokens;
    // The history kept may take half of what the system prompt, the summary and the current turn leave.
    const target = fixed + Math.floor(Math.max(0, budget.promptTokens - fixed) * COMPACTED_SHARE);
    let cut = rest.length;
    if (reason !== "requested") {
      // The first turn boundary after which what is left (pruned) is within the target; else every turn.
      const fits = starts.slice(1).find((at) => pruneToolResults(rest.slice(at), fixed, target, setup.meter).tokens <= target);
      cut = fits ?? rest.length;
    }
    const folded = rest.slice(0, cut);
    let summed: Awaited<ReturnType<typeof summarize>>;
    try {
      summed = await summarize(exec, {
        previous: setup.checkpoint?.summary, messages: folded, meter: setup.meter, windowTokens: setup.window, summaryTokens, signal: request.signal,
      });
    } catch (err) {
      // Even the summary's transcript, cut to fit by estimate, was refused.
      if (err instanceof ModelError && err.kind === "context_length") throw this.#overflow(setup, { tokens: 0, budget });
      if (request.signal.aborted || !(err instanceof ModelError)) throw err;
      // The summary failed (an endpoint error): the person still gets an answer, without those messages this once.
      exec.log.warn({ traceId: state.traceId, sessionKey: state.sessionKey, reason, err: err.message }, "earlier messages could not be summarized");
      exec.observer.emit({ event: "context.compact_failed", traceId: state.traceId, sessionKey: state.sessionKey, reason, messages: cut });
      if (reason === "requested") {
        state.emit({ type: "notice", text: `⚠️ Could not summarize the earlier conversation (${err.message}); answering without summarizing it.` });
        return false;
      }
      this.#leaveOut(setup, cut);
      state.emit({ type: "notice", text: `⚠️ Left ${cut} earlier message${cut === 1 ? "" : "s"} out of this answer to fit the model's context window: summarizing them failed (${err.message}).` });
      return true;
    }
    const { summary, requests } = summed;
    const last = covered + cut - 1;
    const checkpoint: CompactionCheckpoint = {
      version: 1, summary, covers: (setup.checkpoint?.covers ?? 0) + cut, anchor: fingerprint(state.history[last]!),
      before: last > 0 ? fingerprint(state.history[last - 1]!) : undefined, compactions: (setup.checkpoint?.compactions ?? 0) + 1, at: Date.now(),
    };
    await saveCheckpoint(exec.store, state.sessionKey, checkpoint);
    setup.checkpoint = checkpoint;
    exec.observer.emit({
      event: "context.compacted", traceId: state.traceId, sessionKey: state.sessionKey, reason,
      messages: cut, kept: rest.length - cut, summaryRequests: requests, summaryChars: summary.length, compactions: checkpoint.compactions,
    });
    const why = reason === "requested" ? "as asked with /compact" : "to fit the model's context window";
    state.emit({ type: "notice", text: `🗜️ Summarized ${cut} earlier message${cut === 1 ? "" : "s"} of this conversation ${why}.` });
    return true;
  }

  /** The failure a person sees when the conversation cannot be made to fit. */
  #overflow(setup: Setup, built: Pick<Built, "tokens" | "budget">): ModelError {
    const { traceId, sessionKey } = this.#state;
    this.#exec.observer.emit({ event: "context.overflow", traceId, sessionKey, tokens: built.tokens, budgetTokens: built.budget.promptTokens, windowTokens: setup.window });
    return new ModelError(
      "context_length",
      `this conversation no longer fits in the model's context window (${shortTokens(setup.window)} tokens), even after summarizing its earlier messages. ` +
        "Send /new to start a fresh conversation here, or ask for less at once",
      { windowTokens: setup.window },
    );
  }
}
