/**
 * The model client: one Chat Completions request per `complete()` through the `openai` package,
 * streamed by default, with native or text-protocol tool calling, retries (the SDK's own, which
 * honour retry-after), a per-request timeout, an idle timeout while streaming, cancellation,
 * and failures turned into ModelErrors a person can act on. It also absorbs what real servers
 * do: reasoning in `<think>` blocks is cut from the answer; provider fields go back as received
 * (and a history without them is repaired once, so one bad turn never breaks a session); a stream
 * cut before its finish reason is asked again when nothing of it was shown, and never half-used.
 */
import OpenAI, { APIError } from "openai";
import type { ChatCompletionCreateParamsBase, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { z } from "zod";
import { registerSecret, scrubSecrets } from "../observe/scrub.ts";
import { badResponse, isToolsUnsupported, toModelError, type FailureContext } from "./model-errors.ts";
import { modelInfoSource } from "./model-info.ts";
import {
  flattenUnsignedToolTurns,
  hasUnsignedToolTurns,
  providerFieldComplaint,
  toWireMessages,
  type ProviderFieldComplaint,
} from "./provider-fields.ts";
import { fromCompletion, StreamAssembler, type AssembledReply } from "./stream-assembler.ts";
import { withStrayTextCalls } from "./stray-text-calls.ts";
import { hideToolCallBlocks, parseTextToolCalls, toolInstructions, toTextProtocolHistory } from "./text-protocol.ts";
import { hideThinking, opensThinkingInPrompt, stripThinking } from "./thinking.ts";
import { ModelError, type ChatMessage, type ModelClient, type ModelReply, type ModelRequest, type ToolProtocol, type ToolSpec } from "./types.ts";
import { readEventStream, type StreamEnd } from "./event-stream.ts";
import { createHttpFetch } from "./http-fetch.ts";
import { completionSchema, parseChunk } from "./wire.ts";

/** Settings of a model client (usually from the config: OPENAI_BASE_URL, OPENAI_API_KEY, GATEHOUSE_MODEL). */
export interface ModelClientOptions {
  /** The OpenAI-compatible API root, e.g. `http://127.0.0.1:8000/v1`; the SDK's default when absent. */
  baseURL?: string;
  apiKey?: string;
  model: string;
  /** `auto` starts native and switches to text when the server says it cannot take tools. */
  toolProtocol: ToolProtocol;
  /** How long to wait for the answer to start, and for each next streamed piece. */
  timeoutMs: number;
  /** Retries on 429, 5xx and connection failures (the SDK's backoff, honouring retry-after). */
  maxRetries: number;
  log: Logger;
  /** Stream the answer (default true); needed for `onTextDelta`. */
  stream?: boolean;
}

type Mode = "native" | "text";

/** A stream that ended before the reply was whole (connection cut, no finish reason). */
class StreamDropped extends Error {
  /** A chunk of the stream could not be read (after good ones): a broken stream, not a wrong endpoint. */
  readonly garbled: boolean;
  constructor(cause?: unknown, garbled = false) {
    super("the model stream ended before the reply was complete", { cause });
    this.name = "StreamDropped";
    this.garbled = garbled;
  }
}

/** Creates the client the engine uses to talk to the model. */
export function createModelClient(options: ModelClientOptions): ModelClient {
  registerSecret(options.apiKey);
  const log = options.log.child({ component: "model" });
  const sdk = new ModelSdk({
    // Local servers usually need no key, but the SDK insists on one.
    apiKey: options.apiKey || "no-key",
    baseURL: options.baseURL,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
    logger: sdkLogger(log),
    logLevel: "warn",
    fetch: quotaIsFinal(createHttpFetch()),
  });
  const streaming = options.stream ?? true;
  let protocol: Mode = options.toolProtocol === "text" ? "text" : "native";
  let textCallCount = 0;
  const nextTextCallId = () => `text_call_${++textCallCount}`;
  // Learned from the endpoint: it refused provider fields once; its template opens <think> in the prompt.
  let sendsProviderFields = true;
  let thinkOpensInPrompt = false;
  const info = modelInfoSource(sdk, options.model, log);

  async function attempt(request: ModelRequest, mode: Mode, mayFallBack: boolean): Promise<ModelReply> {
    const started = Date.now();
    const ctx: FailureContext = {
      baseURL: sdk.baseURL,
      model: options.model,
      timeoutMs: options.timeoutMs,
      maxRetries: options.maxRetries,
      aborted: false,
      idleTimedOut: false,
    };
    let messages = request.messages;
    let repaired = false;
    let drops = 0;
    for (;;) {
      const shown = { any: false };
      const built = buildParams(options.model, messages, request.tools, mode, sendsProviderFields);
      // `max_tokens` is the field every OpenAI-compatible server reads (the newer `max_completion_tokens` is OpenAI's own).
      const params = request.maxTokens === undefined ? built : { ...built, max_tokens: request.maxTokens };
      try {
        const assembled = streaming ? await streamed(params, request, mode, ctx, shown) : await whole(params, request);
        const reply = finish(assembled, mode, request);
        // Without streaming, the whole answer text is the one and only delta.
        if (!streaming && reply.text && request.onTextDelta) request.onTextDelta(reply.text);
        log.debug({ mode, ms: Date.now() - started, toolCalls: reply.toolCalls.length, finishReason: reply.finishReason }, "model replied");
        return reply;
      } catch (error) {
        ctx.aborted = request.signal?.aborted ?? false;
        if (mayFallBack && !ctx.aborted && isToolsUnsupported(error)) {
          protocol = "text";
          log.warn({ model: options.model }, "the model endpoint does not take native tools; switching to the text tool protocol");
          return attempt(request, "text", false);
        }
        if (error instanceof StreamDropped && !ctx.aborted) {
          // Nothing of the reply was shown or acted on: the request can be made again, like a 5xx.
          if (!shown.any && drops < options.maxRetries) {
            log.warn({ attempt: drops + 1, cause: describeCause(error) }, "the model stream was cut short; retrying");
            await pause(retryDelayMs(drops++), request.signal);
            continue;
          }
          log.warn({ shown: shown.any, cause: describeCause(error), ms: Date.now() - started }, "the model stream was cut short");
          throw droppedError(shown.any, error.garbled);
        }
        const repair = repaired || ctx.aborted ? undefined : repairFor(error, messages, mode);
        if (repair) {
          repaired = true;
          log.warn({ repair: repair.kind }, repair.note);
          if (repair.kind === "unexpected") sendsProviderFields = false;
          messages = repair.messages;
          continue;
        }
        const failure = toModelError(error, ctx);
        if (failure.windowTokens) info.learn(failure.windowTokens);
        // A cancelled turn is the person's choice, not a fault of the endpoint.
        log[failure.kind === "aborted" ? "debug" : "warn"]({ kind: failure.kind, ms: Date.now() - started }, failure.message);
        throw failure;
      }
    }
  }

  /** The history to try once more after a 400 about provider fields, or undefined when nothing would change. */
  function repairFor(error: unknown, messages: ChatMessage[], mode: Mode): { kind: ProviderFieldComplaint; messages: ChatMessage[]; note: string } | undefined {
    if (mode !== "native") return undefined;
    const complaint = providerFieldComplaint(error);
    if (complaint === "unexpected" && sendsProviderFields) {
      return { kind: complaint, messages, note: "the model endpoint refuses provider fields (reasoning, signatures); sending none from now on" };
    }
    if (complaint === "missing" && hasUnsignedToolTurns(messages)) {
      return {
        kind: complaint,
        messages: flattenUnsignedToolTurns(messages),
        note: "the model endpoint wants provider fields the history lacks; earlier tool calls are sent as text",
      };
    }
    return undefined;
  }

  async function streamed(params: Params, request: ModelRequest, mode: Mode, ctx: FailureContext, shown: { any: boolean }): Promise<AssembledReply> {
    // One controller stops the request: the idle timer's, which the caller's signal also trips.
    return withRequestController(request.signal, (idle) => streamedReply(params, request, mode, ctx, shown, idle));
  }

  async function streamedReply(params: Params, request: ModelRequest, mode: Mode, ctx: FailureContext, shown: { any: boolean }, idle: AbortController): Promise<AssembledReply> {
    const signal = idle.signal;
    // The body is read here rather than through the SDK's Stream: the same events, for a small part of its cost per chunk.
    const response = await sdk.chat.completions.create({ ...params, stream: true }, { signal }).asResponse();
    const assembler = new StreamAssembler();
    const onText = request.onTextDelta
      ? (text: string) => {
          shown.any = true;
          request.onTextDelta!(text);
        }
      : undefined;
    const calls = onText && (mode === "text" || readsStrayCalls(request, mode)) ? hideToolCallBlocks(onText) : undefined;
    const thinking = onText ? hideThinking(calls ? calls.push : onText, thinkOpensInPrompt) : undefined;
    let timer: NodeJS.Timeout | undefined;
    const armIdleTimer = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        ctx.idleTimedOut = true;
        idle.abort();
      }, options.timeoutMs);
    };
    let end: StreamEnd | undefined;
    try {
      armIdleTimer();
      end = await readEventStream(
        response,
        (raw) => {
          armIdleTimer();
          const text = assembler.push(parseChunk(raw));
          if (text) thinking?.push(text);
        },
        signal,
      );
    } catch (error) {
      const unreadable = error instanceof SyntaxError || error instanceof z.ZodError;
      // Good chunks, then one that is not JSON or not a chunk: the stream broke (a proxy, a server bug).
      if (unreadable && assembler.chunkCount > 0 && !request.signal?.aborted && !ctx.idleTimedOut) throw new StreamDropped(error, true);
      const cut = !request.signal?.aborted && !ctx.idleTimedOut && !(error instanceof APIError) && !unreadable;
      // A connection lost after the last chunk said the reply was complete loses nothing.
      if (!cut) throw error;
      if (!assembler.finished) throw new StreamDropped(error);
    } finally {
      clearTimeout(timer);
    }
    // An abort may end the body quietly, so cancellation is checked here.
    if (request.signal?.aborted || ctx.idleTimedOut) throw new Error("stream stopped");
    if (assembler.chunkCount === 0) throw badResponse(ctx);
    // `[DONE]` says the reply is whole even when no chunk named a finish reason (vllm-mlx does so on a
    // natural stop); a body that just ended without either was cut short.
    if (!assembler.finished && end !== "done") throw new StreamDropped();
    thinking?.flush();
    calls?.flush();
    return assembler.result();
  }

  async function whole(params: Params, request: ModelRequest): Promise<AssembledReply> {
    const raw: unknown = await withRequestController(request.signal, (controller) =>
      sdk.chat.completions.create({ ...params, stream: false }, { signal: controller.signal }),
    );
    const parsed = completionSchema.safeParse(raw);
    if (!parsed.success) throw badResponse({ baseURL: sdk.baseURL });
    return fromCompletion(parsed.data);
  }

  /** In `auto` mode a native reply may still carry text-protocol blocks, when tools were offered. */
  function readsStrayCalls(request: ModelRequest, mode: Mode): boolean {
    return mode === "native" && options.toolProtocol === "auto" && !!request.tools?.length;
  }

  function finish(raw: AssembledReply, mode: Mode, request: ModelRequest): ModelReply {
    if (opensThinkingInPrompt(raw.content)) thinkOpensInPrompt = true;
    const assembled = { ...raw, content: stripThinking(raw.content) };
    const fields = assembled.provider ? { provider: assembled.provider } : {};
    if (readsStrayCalls(request, mode)) return withStrayTextCalls(assembled, nextTextCallId);
    if (mode === "native") return { text: assembled.content, toolCalls: assembled.toolCalls, finishReason: assembled.finishReason, ...fields };
    const parsed = parseTextToolCalls(assembled.content, nextTextCallId);
    return { text: parsed.text, toolCalls: [...assembled.toolCalls, ...parsed.toolCalls], finishReason: assembled.finishReason, ...fields };
  }

  return {
    complete: (request) => attempt(request, protocol, options.toolProtocol === "auto" && protocol === "native" && !!request.tools?.length),
    describe: () => info.describe(),
  };
}

/**
 * Runs one request with a controller of its own, which the caller's signal trips. The SDK is given
 * only this per-request signal (see ModelSdk): what hangs on it goes when the request does.
 */
async function withRequestController<T>(callerSignal: AbortSignal | undefined, run: (controller: AbortController) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
  try {
    return await run(controller);
  } finally {
    callerSignal?.removeEventListener("abort", onCallerAbort);
  }
}

/**
 * OpenAI answers an account out of credit with a 429 (`insufficient_quota`), which the SDK would
 * retry as a rate limit; the response is marked (`x-should-retry: false`, a header the SDK obeys) so
 * that it fails at once.
 */
function quotaIsFinal(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.status !== 429 || response.headers.has("x-should-retry")) return response;
    const body = await response.text();
    const headers = new Headers(response.headers);
    if (body.includes('"insufficient_quota"')) headers.set("x-should-retry", "false");
    return new Response(body, { status: response.status, statusText: response.statusText, headers });
  };
}

/**
 * The SDK's client, with the request's signal passed to fetch by a listener on the SDK's own
 * per-attempt controller rather than composed with `AbortSignal.any`. Node keeps a composed signal
 * that fetch listens on (with all it references) until it aborts, so every request would have to
 * end with an abort, which costs more than the request's own signal handling. The signal given
 * here must be the request's own (withRequestController's): the listener lives as long as it does.
 */
class ModelSdk extends OpenAI {
  override fetchWithTimeout(...[url, init, ms, controller]: Parameters<OpenAI["fetchWithTimeout"]>): Promise<Response> {
    const signal = init?.signal;
    if (signal) {
      const stop = () => controller.abort(signal.reason);
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
    }
    return super.fetchWithTimeout(url, { ...init, signal: undefined }, ms, controller);
  }
}

/** The message for a reply cut short: said plainly, and what to do. */
function droppedError(shown: boolean, garbled: boolean): ModelError {
  const tail = shown ? "; the text shown so far is incomplete. Ask again." : " and retrying did not help. Ask again in a moment.";
  const what = garbled ? "the model endpoint sent an unreadable piece of its streamed answer (not a chat completion chunk)" : "the model connection dropped";
  return new ModelError("dropped", `${what} before the answer was complete${tail}`);
}

/** Waits between attempts after a cut stream: 0.5 s, doubling, at most 8 s (as the SDK does for a 5xx). */
function retryDelayMs(drops: number): number {
  return Math.min(8_000, 500 * 2 ** drops);
}

async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  await sleep(ms, undefined, signal ? { signal } : undefined).catch(() => undefined);
}

function describeCause(error: StreamDropped): string {
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const deeper = cause?.cause instanceof Error ? `: ${cause.cause.message}` : "";
  return cause ? `${cause.message}${deeper}` : "the stream ended without a finish reason";
}

type Params = Omit<ChatCompletionCreateParamsBase, "stream">;

function buildParams(model: string, messages: ChatMessage[], offered: ToolSpec[] | undefined, mode: Mode, providerFields: boolean): Params {
  const tools = offered?.length ? offered : undefined;
  if (mode === "native") {
    return {
      model,
      // Provider fields go back in the places they came from, which the SDK's types do not know.
      messages: toWireMessages(messages, providerFields) as unknown as ChatCompletionMessageParam[],
      ...(tools ? { tools: tools.map(nativeTool) } : {}),
    };
  }
  const history = toTextProtocolHistory(messages);
  const wire = toWireMessages(tools ? withInstructions(history, tools) : history, false);
  return { model, messages: wire as unknown as ChatCompletionMessageParam[] };
}

function nativeTool(tool: ToolSpec) {
  return { type: "function" as const, function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/** Puts the tool instructions right after the leading system prompt, so that stays first. */
function withInstructions(history: ChatMessage[], tools: ToolSpec[]): ChatMessage[] {
  let at = 0;
  while (at < history.length && history[at].role === "system") at++;
  return [...history.slice(0, at), toolInstructions(tools), ...history.slice(at)];
}

/** Routes the SDK's own log lines into pino, message only (details may hold request headers). */
function sdkLogger(log: Logger) {
  const line = (level: "warn" | "info" | "debug") => (message: unknown) => log[level]({ source: "openai-sdk" }, scrubSecrets(String(message)));
  return { error: line("warn"), warn: line("warn"), info: line("debug"), debug: line("debug") };
}
