/**
 * `http_fetch`: GETs a public web page or API and returns status, content type and body
 * text. The destination is checked before every request (redirects included), so the model
 * cannot reach the bot's own network unless the operator allows it, and the connection goes to
 * exactly the addresses that were checked (a name cannot answer differently the second time).
 * Time and body size are bounded, and a body is streamed only up to the limit. A fetch that starts
 * at a host in `allowHosts` (which nobody is asked about, see policy/egress.ts) follows redirects
 * only to hosts in that list, so an open redirect there cannot carry the URL somewhere unasked.
 */
import type { Readable } from "node:stream";
import { z } from "zod";
import type { Tool } from "../tool.ts";
import { failed, succeeded } from "../result.ts";
import { BlockedDestinationError, checkDestination, hostInAllowList, type NetworkGuardOptions } from "../network-guard.ts";
import { pinnedGet, type PinnedResponse } from "../pinned-get.ts";
import { scrubSecrets } from "../../observe/scrub.ts";

/** Options of `http_fetch`: what it may reach, and how long and how much it may read. */
export interface HttpFetchOptions extends NetworkGuardOptions {
  /** The whole request, body included, must finish within this (default 15 s). */
  timeoutMs?: number;
  /** The most body bytes returned (default 512 KB); the rest is not downloaded. */
  maxBytes?: number;
  /** Redirects followed, each checked like the first URL (default 5). */
  maxRedirects?: number;
  userAgent?: string;
}

const parameters = z.object({
  url: z.string().min(1).describe("http or https URL to GET"),
});

/** Arguments of `http_fetch`. */
export type HttpFetchArgs = z.infer<typeof parameters>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const BINARY_TYPES = /^(image|audio|video|font)\/|^application\/(octet-stream|zip|gzip|x-tar|pdf|x-7z|wasm)/i;

/** Creates the `http_fetch` tool. */
export function httpFetchTool(options: HttpFetchOptions = {}): Tool<HttpFetchArgs> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxBytes = options.maxBytes ?? 512 * 1024;
  const maxRedirects = options.maxRedirects ?? 5;
  const userAgent = options.userAgent ?? "Gatehouse-bot/0.1 (+http_fetch)";
  return {
    name: "http_fetch",
    description: `Fetches a public http(s) URL with GET and returns the status, content type and body text (at most ${Math.round(maxBytes / 1024)} KB).`,
    parameters,
    risk: "read",
    owner: "builtin",
    // Secrets (a token in the query) are masked before the cut, which would leave half a token unmasked.
    hint: (args) => shorten(scrubSecrets(displayUrl(args.url)), 80),
    async execute(args, ctx) {
      let url: URL;
      try {
        url = new URL(args.url);
      } catch {
        return failed(`not a valid URL: ${displayUrl(args.url)} (expected something like https://example.com/page)`);
      }
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = AbortSignal.any([ctx.signal, timeout]);
      const allowHosts = options.allowHosts ?? [];
      const startedAllowed = hostInAllowList(url, allowHosts);
      try {
        for (let hops = 0; ; hops++) {
          const addresses = await checkDestination(url, options);
          if (hops > 0 && startedAllowed && !hostInAllowList(url, allowHosts)) {
            return failed(`refused to follow a redirect to ${displayUrl(url.href)}: ${url.host} is not in http.allowHosts (fetch that URL on its own, and a person is asked)`);
          }
          if (url.username || url.password) {
            return failed(`could not fetch ${displayUrl(url.href)}: URLs with a user name or password are not fetched`);
          }
          const response = await pinnedGet(url, addresses, {
            signal,
            headers: {
              "user-agent": userAgent,
              accept: "text/html, application/json, text/*;q=0.9, */*;q=0.5",
              "accept-encoding": "gzip, deflate, br",
            },
          });
          const location = response.header("location");
          if (REDIRECTS.has(response.status) && location) {
            response.discard();
            if (hops >= maxRedirects) return failed(`stopped after ${maxRedirects} redirects at ${displayUrl(url.href)}`);
            url = new URL(location, url);
            continue;
          }
          return await describeResponse(response, url, maxBytes);
        }
      } catch (err) {
        if (err instanceof BlockedDestinationError) return failed(err.message);
        if (timeout.aborted) return failed(`timed out after ${timeoutMs} ms fetching ${displayUrl(url.href)}`);
        if (ctx.signal.aborted) return failed(`cancelled while fetching ${displayUrl(url.href)}`);
        return failed(`could not fetch ${displayUrl(url.href)}: ${networkReason(err)}`);
      }
    },
  };
}

async function describeResponse(response: PinnedResponse, url: URL, maxBytes: number) {
  const type = response.header("content-type") ?? "(none)";
  const head = `GET ${displayUrl(url.href)} → ${response.status} ${response.statusText}\ncontent-type: ${type}\n\n`;
  let body: string;
  if (BINARY_TYPES.test(type)) {
    response.discard();
    const length = response.header("content-length");
    body = `(binary body not shown${length ? `, ${length} bytes` : ""})`;
  } else {
    const { bytes, cut } = await readCapped(response.body, maxBytes);
    if (cut) response.discard();
    body = new TextDecoder(charsetOf(type)).decode(bytes);
    if (cut) body += `\n[body cut at ${maxBytes} bytes]`;
  }
  const output = head + body;
  if (response.status >= 400) return failed(`HTTP ${response.status} ${response.statusText}`.trim(), output);
  return succeeded(output);
}

/** Reads the body up to `maxBytes`, then stops the download. */
async function readCapped(body: Readable, maxBytes: number): Promise<{ bytes: Uint8Array; cut: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let cut = false;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (total + chunk.byteLength > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - total));
      total = maxBytes;
      cut = true;
      break;
    }
    chunks.push(chunk);
    total += chunk.byteLength;
  }
  return { bytes: Buffer.concat(chunks, total), cut };
}

function charsetOf(contentType: string): string {
  const charset = /charset="?([^";\s]+)/i.exec(contentType)?.[1];
  if (!charset) return "utf-8";
  try {
    new TextDecoder(charset);
    return charset;
  } catch {
    return "utf-8";
  }
}

/** The URL without user name or password, so credentials never reach a message. */
function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = "";
    url.password = "";
    return url.href;
  } catch {
    return raw.replace(/\/\/[^/@]*@/, "//");
  }
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function networkReason(err: unknown): string {
  const { code, cause } = err as { code?: string; cause?: { code?: string; message?: string } };
  return code ?? cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
