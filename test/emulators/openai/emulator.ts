/**
 * A local OpenAI-compatible endpoint for tests: `POST /v1/chat/completions` (streamed or not)
 * and `GET /v1/models`, answering from a queue of scripted steps, recording every request.
 * The real `openai` client talks to it through `baseURL`.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { assistantTurnFor, completionBody, completionChunks, errorBody, type Step } from "./steps.ts";
import { providerProblem, requestProblem, type ChatRequestBody, type ProviderRules } from "./request-checks.ts";
import { contextLengthRefusal, promptCounter } from "./context-window.ts";

export type { Step, ScriptedToolCall, ScriptedTextToolCall } from "./steps.ts";
export type { ChatRequestBody, ProviderRules } from "./request-checks.ts";

/** One received chat completions request: its parsed body and headers. */
export interface RecordedRequest {
  body: ChatRequestBody;
  headers: IncomingHttpHeaders;
  /** The prompt's size in o200k tokens (only when the emulator has a `contextTokens` window). */
  promptTokens?: number;
  /** For a `hang` step: set when the client closed the connection (gave up or was cancelled). */
  hungUp?: boolean;
}

/** Options for `startOpenAIEmulator`. */
export interface OpenAIEmulatorOptions {
  /** When set, every request must carry `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Model id reported by `GET /v1/models` and in completions when the request names none. */
  model?: string;
  /**
   * The model's context window: reported as `context_length` by `GET /v1/models`, and a request
   * whose prompt is larger is refused with 400 `context_length_exceeded`, as OpenAI does.
   */
  contextTokens?: number;
}

/** A running emulator. */
export interface OpenAIEmulator {
  /** e.g. `http://127.0.0.1:PORT/v1`, for the openai client's `baseURL`. */
  baseURL: string;
  /** Every chat completions request received, in order. */
  requests: RecordedRequest[];
  /** Queues replies, consumed one per request. */
  script(...steps: Step[]): void;
  /** Answers requests when the queue is empty. */
  setFallback(fn: (request: RecordedRequest) => Step): void;
  /** Enforces what a real provider insists on (thought signatures, reasoning sent back, no unknown fields). */
  setProviderRules(rules: ProviderRules): void;
  close(): Promise<void>;
}

const DEFAULT_FALLBACK = (): Step => ({ text: "(emulator: no scripted reply)" });

/** Starts the emulator on 127.0.0.1 (port 0 unless told otherwise). */
export async function startOpenAIEmulator(options: OpenAIEmulatorOptions = {}): Promise<OpenAIEmulator> {
  const queue: Step[] = [];
  const requests: RecordedRequest[] = [];
  let fallback: (request: RecordedRequest) => Step = DEFAULT_FALLBACK;
  let rules: ProviderRules = {};
  const sockets = new Set<Socket>();
  const defaultModel = options.model ?? "emulator-model";
  const countPrompt = options.contextTokens ? await promptCounter() : undefined;

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, errorBody("emulator failure", "server_error"));
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0];
    const isChat = req.method === "POST" && path === "/v1/chat/completions";
    const raw = await readBody(req);
    let body: ChatRequestBody | undefined;
    if (isChat) {
      try {
        body = JSON.parse(raw) as ChatRequestBody;
      } catch {
        return sendJson(res, 400, errorBody("We could not parse the JSON body of your request.", "invalid_request_error"));
      }
      requests.push({ body, headers: req.headers });
    }
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendJson(res, 401, errorBody("Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"));
    }
    if (req.method === "GET" && path === "/v1/models") {
      return sendJson(res, 200, JSON.stringify({
        object: "list",
        data: [{ id: defaultModel, object: "model", created: 0, owned_by: "emulator", ...(options.contextTokens ? { context_length: options.contextTokens } : {}) }],
      }));
    }
    if (!isChat || !body) {
      return sendJson(res, 404, errorBody(`Invalid URL (${req.method} ${path})`, "invalid_request_error"));
    }
    const problem = requestProblem(body) ?? providerProblem(body, rules);
    if (problem) return sendJson(res, 400, errorBody(problem, "invalid_request_error"));
    const recorded = requests[requests.length - 1];
    if (countPrompt && options.contextTokens) {
      recorded.promptTokens = countPrompt(body);
      if (recorded.promptTokens > options.contextTokens) return sendJson(res, 400, contextLengthRefusal(options.contextTokens, recorded.promptTokens));
    }
    const step = queue.length ? queue.shift()! : fallback(recorded);
    if ("hang" in step) res.on("close", () => void (recorded.hungUp = true));
    answer(step, body, res);
  }

  function answer(step: Step, body: ChatRequestBody, res: ServerResponse): void {
    const model = typeof body.model === "string" ? body.model : defaultModel;
    if ("hang" in step) {
      // The socket stays open until the client gives up or close() runs.
      if (step.afterText && body.stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
        const chunks = completionChunks({ content: step.afterText, toolCalls: [], finishReason: "stop" }, model);
        for (const chunk of chunks.slice(0, -1)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      }
      return;
    }
    if ("status" in step) {
      const headers: Record<string, string> = {};
      if (step.retryAfter !== undefined) headers["retry-after"] = String(step.retryAfter);
      if (step.html !== undefined) {
        res.writeHead(step.status, { ...headers, "content-type": "text/html" });
        res.end(step.html);
        return;
      }
      return sendJson(res, step.status, errorFor(step.status, step.message, step.code), headers);
    }
    if ("sse" in step) {
      void writeRaw(res, step.sse, step.cut === true);
      return;
    }
    if ("garbage" in step) {
      res.writeHead(200, { "content-type": step.contentType ?? "text/html" });
      res.end(step.body ?? "<html><body><h1>502 Bad Gateway</h1></body></html>");
      return;
    }
    const turn = assistantTurnFor(step);
    if (body.stream !== true) return sendJson(res, 200, completionBody(turn, model));
    // Every event is ready at once, so they go out together, as a server's tokens do when they
    // come faster than the network; `sse` steps send events in separate writes.
    let events = "";
    for (const chunk of completionChunks(turn, model)) events += `data: ${JSON.stringify(chunk)}\n\n`;
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
    res.end(`${events}data: [DONE]\n\n`);
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...steps) => void queue.push(...steps),
    setFallback: (fn) => void (fallback = fn),
    setProviderRules: (next) => void (rules = next),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Writes each piece as its own TCP write (Nagle off, a pause between), then ends or cuts the connection. */
async function writeRaw(res: ServerResponse, pieces: Array<string | Uint8Array>, cut: boolean): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  for (const piece of pieces) {
    if (res.destroyed) return;
    res.write(piece);
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  if (cut) res.socket?.destroy();
  else res.end();
}

function errorFor(status: number, message?: string, code?: string): string {
  if (status === 429 && code === "insufficient_quota") {
    return errorBody(message ?? "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.", "insufficient_quota", code);
  }
  if (status === 429) return errorBody(message ?? "Rate limit reached for requests. Please try again in 1s.", "requests", "rate_limit_exceeded");
  if (status >= 500) return errorBody(message ?? "The server had an error while processing your request. Sorry about that!", "server_error");
  return errorBody(message ?? `request failed with status ${status}`, "invalid_request_error", code ?? null);
}

function sendJson(res: ServerResponse, status: number, json: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(json);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}
