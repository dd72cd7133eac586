/**
 * The process's one HTTP server, on PORT: `/healthz` and `/readyz` for whatever runs the bot, and
 * the endpoints platforms post to, which the adapters mount through `HttpRoutes` (Slack's Events API,
 * the Telegram webhook). Routes match an exact path; HEAD is answered like GET.
 *
 * While the bot is starting, a request for a path nobody has mounted yet waits for the start to
 * finish (up to `startupWaitMs`) instead of failing: a Slack event or a Telegram update that arrives
 * during a restart is served once its channel is up, and a 404 means the path is really unknown.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { HttpHandler, HttpRoutes } from "../ports.ts";

export interface HttpServerOptions {
  port: number;
  /** The bind address: `0.0.0.0` (every interface) in production, `127.0.0.1` on a developer's machine. */
  host: string;
  log: Logger;
  /** How long a request for a path not mounted yet waits while the bot starts (default 10 s). */
  startupWaitMs?: number;
}

/** Writes a JSON answer (no caching: health answers must be fresh). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }).end(text);
}

/** A listening server with mountable routes. */
export interface HttpServer extends HttpRoutes {
  /** The port it listens on (the one asked for, or the one picked for port 0). */
  readonly port: number;
  /** The bot has started: requests waiting for a route are served now, or answered 404. */
  ready(): void;
  /** Stops listening and ends every open connection. */
  close(): Promise<void>;
}

/** A route mounted as `<prefix>/*` serves every path below the prefix (e.g. `/v1/turns/<id>`). */
function underPrefix(routes: Map<string, HttpHandler>, method: string, path: string): HttpHandler | undefined {
  const cut = path.lastIndexOf("/");
  return cut > 0 && cut < path.length - 1 ? routes.get(`${method} ${path.slice(0, cut)}/*`) : undefined;
}

/** Starts the server; rejects with a message naming PORT when the address cannot be used. */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { log } = options;
  const routes = new Map<string, HttpHandler>();
  let starting = true;
  let closed = false;
  let markReady: () => void = () => {};
  const started = new Promise<void>((resolve) => (markReady = resolve));

  const run = (handler: HttpHandler, req: IncomingMessage, res: ServerResponse) => {
    try {
      handler(req, res);
    } catch (error) {
      log.error({ err: (error as Error).message, path: req.url }, "http request failed");
      if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
    }
  };

  const dispatch = (req: IncomingMessage, res: ServerResponse, waited: boolean) => {
    let path: string;
    try {
      path = new URL(req.url ?? "/", "http://localhost").pathname;
    } catch {
      return sendJson(res, 400, { error: "bad request" });
    }
    const method = req.method === "HEAD" ? "GET" : (req.method ?? "GET");
    const handler = routes.get(`${method} ${path}`) ?? underPrefix(routes, method, path);
    if (handler) return run(handler, req, res);
    if (starting && !waited && !closed) {
      const limit = new Promise<void>((resolve) => setTimeout(resolve, options.startupWaitMs ?? 10_000).unref());
      void Promise.race([started, limit]).then(() => {
        if (closed || starting) return sendJson(res, 503, { error: closed ? "shutting down" : "starting" });
        dispatch(req, res, true);
      });
      return;
    }
    const other = [...routes.keys()].some((key) => key.endsWith(` ${path}`));
    sendJson(res, other ? 405 : 404, { error: other ? "method not allowed" : "not found" });
  };

  const server: Server = createServer((req, res) => dispatch(req, res, false));
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const where = `${options.host}:${options.port}`;
      if (error.code === "EADDRINUSE") reject(new Error(`PORT ${options.port}: ${where} is already in use by another program. Stop it, or set PORT to a free port.`));
      else if (error.code === "EACCES") reject(new Error(`PORT ${options.port}: not allowed to listen on ${where} (ports below 1024 need privileges). Set PORT to 1024 or above.`));
      else if (error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND") reject(new Error(`HOST ${options.host}: not an address of this machine. Use 0.0.0.0 (every interface) or 127.0.0.1.`));
      else reject(error);
    });
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const localHost = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host.includes(":") ? `[${options.host}]` : options.host;
  const localUrl = `http://${localHost}:${port}`;
  log.info({ host: options.host, port }, "http server listening");

  return {
    port,
    localUrl,
    mount(method, path, handler) {
      const key = `${method} ${path}`;
      if (routes.has(key)) throw new Error(`the HTTP path ${method} ${path} is already served by another part of the bot`);
      routes.set(key, handler);
      return () => {
        if (routes.get(key) === handler) routes.delete(key);
      };
    },
    ready() {
      starting = false;
      markReady();
    },
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        markReady();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
