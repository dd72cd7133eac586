/**
 * The `fetch` the model client hands the openai SDK: a request with a string body (every Chat
 * Completions call) goes straight on node:http(s) over kept-alive connections, and its answer is a
 * standard Response whose body streams the socket's bytes as they come. The full fetch of Node does
 * the same work through the Fetch standard's layers, which cost more CPU than the request itself on
 * a local model server. Anything this path does not do goes through Node's fetch instead: another
 * kind of body, a redirect, and every request while Node is asked to use the proxy environment
 * variables (NODE_USE_ENV_PROXY).
 */
import http from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import zlib from "node:zlib";

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Statuses whose response has no body (the Response constructor refuses one). */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

export function createHttpFetch(): typeof fetch {
  // As Node's own global agent: a connection idle for 5 s is closed before a server drops it under a request.
  const kept = { keepAlive: true, scheduling: "lifo", timeout: 5_000 } as const;
  const agents = { http: new http.Agent(kept), https: new https.Agent(kept) };
  const viaProxy = Boolean(process.env.NODE_USE_ENV_PROXY) && process.env.NODE_USE_ENV_PROXY !== "0";
  const httpFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const body = init?.body;
    if (viaProxy || input instanceof Request || (body !== undefined && body !== null && typeof body !== "string")) return fetch(input, init);
    const url = typeof input === "string" ? new URL(input) : input;
    if (url.protocol !== "http:" && url.protocol !== "https:") return fetch(input, init);
    const secure = url.protocol === "https:";
    const headers = headersOf(init?.headers);
    if (body != null) headers["content-length"] = String(Buffer.byteLength(body));
    headers["accept-encoding"] ??= "gzip, deflate, br";
    const signal = init?.signal ?? undefined;
    const method = (init?.method ?? "GET").toUpperCase();
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const request = (secure ? https : http).request(url, { method, headers, agent: secure ? agents.https : agents.http }, (res) => {
        const status = res.statusCode ?? 0;
        if (REDIRECTS.has(status) && res.headers.location && init?.redirect !== "manual" && init?.redirect !== "error") {
          res.resume();
          // As fetch follows one: 307 and 308 send the same request again, the others a GET.
          const next = new URL(res.headers.location, url);
          const same = status === 307 || status === 308 || method === "GET" || method === "HEAD";
          return resolve(fetch(next, same ? init : { ...init, method: "GET", body: undefined }));
        }
        if (status < 200 || status > 599 || NO_BODY.has(status) || method === "HEAD") {
          res.resume();
          return resolve(new Response(null, { status: status >= 200 && status <= 599 ? status : 502, statusText: res.statusMessage ?? "", headers: responseHeaders(res) }));
        }
        resolve(new Response(bodyStream(decoded(res), res, signal), { status, statusText: res.statusMessage ?? "", headers: responseHeaders(res) }));
      });
      const onAbort = () => request.destroy(abortError(signal!));
      signal?.addEventListener("abort", onAbort, { once: true });
      request.on("close", () => signal?.removeEventListener("abort", onAbort));
      request.on("error", (err) => reject(signal?.aborted ? abortError(signal) : connectionError(err)));
      request.end(body ?? undefined);
    });
  };
  return httpFetch as typeof fetch;
}

/** The response's bytes as a web stream: read as they come, paused while the reader is behind. */
function bodyStream(source: Readable, res: http.IncomingMessage, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  let ended = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // After a cancel (or the end) the controller takes nothing more: bytes still in flight are dropped.
      source.on("data", (chunk: Buffer) => {
        if (ended) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) source.pause();
      });
      source.on("end", () => {
        if (ended) return;
        ended = true;
        controller.close();
      });
      const fail = (err?: Error) => {
        if (ended) return;
        ended = true;
        controller.error(signal?.aborted ? abortError(signal) : connectionError(err ?? new Error("the connection closed before the answer was complete")));
      };
      source.on("error", fail);
      res.on("close", () => {
        // A decoder may still hold the last bytes when the socket closes; it ends or fails by itself.
        if (source === res) fail();
      });
    },
    pull() {
      source.resume();
    },
    cancel() {
      ended = true;
      res.destroy();
    },
  }, { highWaterMark: 16 });
}

function decoded(res: http.IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "").trim().toLowerCase();
  const decoder = encoding === "gzip" || encoding === "x-gzip" ? zlib.createGunzip() : encoding === "deflate" ? zlib.createInflate() : encoding === "br" ? zlib.createBrotliDecompress() : undefined;
  if (!decoder) return res;
  res.on("error", (err) => decoder.destroy(err));
  res.on("close", () => {
    if (!res.complete) decoder.destroy(new Error("the connection closed before the answer was complete"));
  });
  return res.pipe(decoder);
}

function headersOf(headers: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  const entries: Iterable<[string, string]> =
    headers instanceof Headers ? headers.entries() : Array.isArray(headers) ? (headers as Array<[string, string]>) : Object.entries(headers as Record<string, string>);
  for (const [name, value] of entries) out[name.toLowerCase()] = String(value);
  return out;
}

function responseHeaders(res: http.IncomingMessage): Headers {
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i]!, raw[i + 1]!);
    } catch {
      // A header value Headers refuses (a control character) is left out, as a lenient client would.
    }
  }
  return headers;
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return new DOMException("This operation was aborted", "AbortError");
}

/** As Node's fetch reports a failed connection: a TypeError whose cause is the socket's error. */
function connectionError(cause: Error): TypeError {
  return new TypeError("fetch failed", { cause });
}
