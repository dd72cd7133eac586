/**
 * The model client: one Chat Completions request per `complete()` through the `openai` package,
 * streamed by default, with native or text-protocol tool calling, retries (the SDK's own, which
 * honour retry-after), a per-request timeout, an idle timeout while streaming, cancellation,
 * and failures turned into ModelErrors a person can act on.
 */
import OpenAI from "openai";
import type { ChatCompletionCreateParamsBase, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { Logger } from "pino";
import { registerSecret, scrubSecrets } from "../observe/scrub.ts";
import { badResponse, isToolsUnsupported, toModelError, type FailureContext } from "./model-errors.ts";
import { fromCompletion, StreamAssembler, type AssembledReply } from "./stream-assembler.ts";
import { withStrayTextCalls } from "./stray-text-calls.ts";
import { hideToolCallBlocks, parseTextToolCalls, toolInstructions, toTextProtocolHistory } from "./text-protocol.ts";
import type { ChatMessage, ModelClient, ModelReply, ModelRequest, ToolProtocol, ToolSpec } from "./types.ts";
import { completionChunkSchema, completionSchema } from "./wire.ts";

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

/** Creates the client the engine uses to talk to the model. */
export function createModelClient(options: ModelClientOptions): ModelClient {
  registerSecret(options.apiKey);
  const log = options.log.child({ component: "model" });
  const sdk = new OpenAI({
    // Local servers usually need no key, but the SDK insists on one.
    apiKey: options.apiKey || "no-key",
    baseURL: options.baseURL,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
    logger: sdkLogger(log),
    logLevel: "warn",
  });
  const streaming = options.stream ?? true;
  let protocol: Mode = options.toolProtocol === "text" ? "text" : "native";
  let textCallCount = 0;
  const nextTextCallId = () => `text_call_${++textCallCount}`;

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
    const params = buildParams(options.model, request, mode);
    try {
      const assembled = streaming ? await streamed(params, request, mode, ctx) : await whole(params, request);
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
      const failure = toModelError(error, ctx);
      // A cancelled turn is the person's choice, not a fault of the endpoint.
      log[failure.kind === "aborted" ? "debug" : "warn"]({ kind: failure.kind, ms: Date.now() - started }, failure.message);
      throw failure;
    }
  }

  async function streamed(params: Params, request: ModelRequest, mode: Mode, ctx: FailureContext): Promise<AssembledReply> {
    const idle = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, idle.signal]) : idle.signal;
    const stream = await sdk.chat.completions.create({ ...params, stream: true }, { signal });
    const assembler = new StreamAssembler();
    const onText = request.onTextDelta;
    const shown = onText && (mode === "text" || readsStrayCalls(request, mode)) ? hideToolCallBlocks(onText) : undefined;
    let timer: NodeJS.Timeout | undefined;
    const armIdleTimer = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        ctx.idleTimedOut = true;
        idle.abort();
      }, options.timeoutMs);
    };
    try {
      armIdleTimer();
      for await (const raw of stream) {
        armIdleTimer();
        const text = assembler.push(completionChunkSchema.parse(raw));
        if (text && onText) (shown ? shown.push(text) : onText(text));
      }
    } finally {
      clearTimeout(timer);
    }
    // The SDK ends a stream quietly when it is aborted, so cancellation is checked here.
    if (request.signal?.aborted || ctx.idleTimedOut) throw new Error("stream stopped");
    shown?.flush();
    if (assembler.chunkCount === 0) throw badResponse(ctx);
    return assembler.result();
  }

  async function whole(params: Params, request: ModelRequest): Promise<AssembledReply> {
    const raw: unknown = await sdk.chat.completions.create({ ...params, stream: false }, { signal: request.signal });
    const parsed = completionSchema.safeParse(raw);
    if (!parsed.success) throw badResponse({ baseURL: sdk.baseURL });
    return fromCompletion(parsed.data);
  }

  /** In `auto` mode a native reply may still carry text-protocol blocks, when tools were offered. */
  function readsStrayCalls(request: ModelRequest, mode: Mode): boolean {
    return mode === "native" && options.toolProtocol === "auto" && !!request.tools?.length;
  }

  function finish(assembled: AssembledReply, mode: Mode, request: ModelRequest): ModelReply {
    if (readsStrayCalls(request, mode)) return withStrayTextCalls(assembled, nextTextCallId);
    if (mode === "native") return { text: assembled.content, toolCalls: assembled.toolCalls, finishReason: assembled.finishReason };
    const parsed = parseTextToolCalls(assembled.content, nextTextCallId);
    return { text: parsed.text, toolCalls: [...assembled.toolCalls, ...parsed.toolCalls], finishReason: assembled.finishReason };
  }

  return {
    complete: (request) => attempt(request, protocol, options.toolProtocol === "auto" && protocol === "native" && !!request.tools?.length),
  };
}

type Params = Omit<ChatCompletionCreateParamsBase, "stream">;

function buildParams(model: string, request: ModelRequest, mode: Mode): Params {
  const tools = request.tools?.length ? request.tools : undefined;
  if (mode === "native") {
    return {
      model,
      messages: request.messages as ChatCompletionMessageParam[],
      ...(tools ? { tools: tools.map(nativeTool) } : {}),
    };
  }
  const history = toTextProtocolHistory(request.messages);
  return { model, messages: (tools ? withInstructions(history, tools) : history) as ChatCompletionMessageParam[] };
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
