/**
 * One GET over node:http / node:https that connects only to addresses the network guard has
 * already checked, instead of resolving the host name a second time: a name whose answer
 * changes between the check and the connection (DNS rebinding) cannot steer the request to
 * another address. The Host header, the TLS server name and the certificate check still use
 * the URL's host name.
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { addAbortSignal, pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";

/** A response whose body has not been read yet. */
export interface PinnedResponse {
  status: number;
  statusText: string;
  /** A response header (repeated headers joined with ", "), or undefined when absent. */
  header(name: string): string | undefined;
  /** The body, decompressed; it fails with an AbortError when the request's signal aborts. */
  body: Readable;
  /** Stops the download and closes the connection (the body is not needed, or no more of it). */
  discard(): void;
}

/** What a pinned GET sends and when it gives up. */
export interface PinnedGetInit {
  headers: Record<string, string>;
  /** Aborts the connection attempt, the wait for headers and the body alike. */
  signal: AbortSignal;
}

/**
 * A `lookup` for node:net that answers with the given addresses and never asks DNS, so a
 * socket can only connect to them. Honours a requested family and `all` (happy eyeballs).
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const entries: LookupAddress[] = addresses.map((address) => ({ address, family: isIP(address) }));
  return (hostname: string, options: LookupOptions, callback) => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
    const wanted = family === 4 || family === 6 ? entries.filter((e) => e.family === family) : entries;
    if (wanted.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`no checked IPv${family} address for ${hostname}`);
      err.code = "ENOTFOUND";
      callback(err, "", 0);
    } else if (options.all) callback(null, wanted);
    else callback(null, wanted[0].address, wanted[0].family);
  };
}

/**
 * GETs `url`, connecting only to `addresses` (those the guard checked for the URL's host).
 * Resolves once the response headers arrive; rejects on connection, TLS or abort errors.
 * User name and password in the URL are never sent.
 */
export function pinnedGet(url: URL, addresses: readonly string[], init: PinnedGetInit): Promise<PinnedResponse> {
  const secure = url.protocol === "https:";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: init.headers,
        signal: init.signal,
        lookup: pinnedLookup(addresses),
        // A fresh connection every time: a pooled socket could belong to an earlier answer.
        agent: false,
        ...(secure && !isIP(host) ? { servername: host } : {}),
      },
      (response) => {
        const body = decoded(response);
        addAbortSignal(init.signal, body);
        // Errors reach whoever reads the body; an unread body must not crash the process.
        body.on("error", () => {});
        resolve({
          status: response.statusCode ?? 0,
          statusText: response.statusMessage ?? "",
          header: (name) => {
            const value = response.headers[name.toLowerCase()];
            return Array.isArray(value) ? value.join(", ") : value;
          },
          body,
          discard: () => {
            body.destroy();
            request.destroy();
          },
        });
      },
    );
    request.on("error", reject);
    request.end();
  });
}

/** The response body with its content-encoding undone (gzip, deflate, br); other encodings pass as they are. */
function decoded(response: http.IncomingMessage): Readable {
  const encoding = (response.headers["content-encoding"] ?? "").trim().toLowerCase();
  // Lenient like browsers: a body cut short still yields what arrived.
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  const brotliFlush = { flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH };
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip(flush)
      : encoding === "deflate"
        ? zlib.createInflate(flush)
        : encoding === "br"
          ? zlib.createBrotliDecompress(brotliFlush)
          : undefined;
  if (!decoder) return response;
  pipeline(response, decoder, () => {
    /* a failure already destroyed both streams; the reader sees it */
  });
  return decoder;
}
