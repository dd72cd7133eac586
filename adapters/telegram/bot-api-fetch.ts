/**
 * The `fetch` grammY calls the Bot API with: a JSON request on a kept-alive connection and the answer
 * read whole, straight on node:http(s). grammY uses no more of a response than `json()`, and the
 * whole fetch machinery (node-fetch, or Node's own) costs two to three times the CPU of the request
 * itself, on every call a busy bot makes. A body that is not a string (a multipart file upload), and
 * every call while Node is asked to use the proxy environment variables, go through Node's fetch.
 */
import http from "node:http";
import https from "node:https";

/** What of a Response grammY reads, and a little more for anyone logging one. */
export interface BotApiResponse {
  ok: boolean;
  status: number;
  statusText: string;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

export function createBotApiFetch(): typeof fetch {
  // As Node's own global agent: a connection idle for 5 s is closed before a server drops it under a request.
  const kept = { keepAlive: true, scheduling: "lifo", timeout: 5_000 } as const;
  const agents = { http: new http.Agent(kept), https: new https.Agent(kept) };
  // Node's fetch goes through HTTPS_PROXY and the like when asked to (NODE_USE_ENV_PROXY); node:http here does not.
  const viaProxy = Boolean(process.env.NODE_USE_ENV_PROXY) && process.env.NODE_USE_ENV_PROXY !== "0";
  const botApiFetch = (input: string | URL | Request, init?: RequestInit): Promise<BotApiResponse> => {
    const body = init?.body;
    if (viaProxy || (body !== undefined && body !== null && typeof body !== "string") || input instanceof Request) {
      return fetch(input, init) as Promise<BotApiResponse>;
    }
    const url = typeof input === "string" ? new URL(input) : input;
    const secure = url.protocol === "https:";
    const headers: Record<string, string> = { accept: "application/json", ...headersOf(init?.headers) };
    if (body != null) headers["content-length"] = String(Buffer.byteLength(body));
    const signal = init?.signal ?? undefined;
    return new Promise<BotApiResponse>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const request = (secure ? https : http).request(url, { method: init?.method ?? "GET", headers, agent: secure ? agents.https : agents.http }, (res) => {
        const chunks: Buffer[] = [];
        const text = new Promise<string>((done, fail) => {
          let ended = false;
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => {
            ended = true;
            done(Buffer.concat(chunks).toString("utf8"));
          });
          res.on("error", fail);
          res.on("close", () => {
            if (!ended) fail(signal?.aborted ? abortError(signal) : new Error("the connection closed before the answer was complete"));
          });
        });
        // Read at once (the connection goes back to the pool); a caller that never reads loses nothing.
        text.catch(() => undefined);
        const status = res.statusCode ?? 0;
        resolve({
          ok: status >= 200 && status < 300,
          status,
          statusText: res.statusMessage ?? "",
          text: () => text,
          json: () => text.then((t) => JSON.parse(t) as unknown),
        });
      });
      const onAbort = () => request.destroy(abortError(signal!));
      signal?.addEventListener("abort", onAbort, { once: true });
      request.on("close", () => signal?.removeEventListener("abort", onAbort));
      request.on("error", reject);
      request.end(body ?? undefined);
    });
  };
  return botApiFetch as unknown as typeof fetch;
}

function headersOf(headers: RequestInit["headers"]): Record<string, string> {
  if (!headers) return {};
  if (headers instanceof Headers) return Object.fromEntries(headers.entries());
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  return headers as Record<string, string>;
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const error = new Error("the request was aborted", { cause: reason });
  error.name = "AbortError";
  return error;
}
