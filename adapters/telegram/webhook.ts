/**
 * The webhook receiver: takes Telegram's update POSTs on the webhook URL's path, refuses any request
 * without the right X-Telegram-Bot-Api-Secret-Token (401, not processed), and answers 200 once the
 * update is handled, so Telegram redelivers anything a crash interrupted. It is mounted on the
 * shared HTTP server when there is one (PORT), else it listens on a port of its own.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import type { HttpRoutes } from "../../src/ports.ts";

export interface WebhookServerOptions {
  secret: string;
  path: string;
  host: string;
  port: number;
  /** The shared HTTP server: the receiver is mounted there on `path` (host and port are then unused). */
  routes?: HttpRoutes;
  log: Logger;
  /** Handles one raw update; resolves when it is no longer in flight. Must not throw. */
  handle(update: unknown): Promise<void>;
}

const MAX_BODY_BYTES = 1_000_000;

function secretMatches(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/** A running webhook receiver. */
export interface WebhookServer {
  address: { host: string; port: number };
  close(): Promise<void>;
}

/** Answers one request already routed to the webhook's path: checks method and secret, then hands the update on. */
export function webhookRequestHandler(options: Pick<WebhookServerOptions, "secret" | "log" | "handle">): (req: IncomingMessage, res: ServerResponse) => void {
  const { log } = options;
  return (req, res) => {
    void (async () => {
      if (req.method !== "POST") {
        res.writeHead(404).end();
        return;
      }
      if (!secretMatches(req.headers["x-telegram-bot-api-secret-token"], options.secret)) {
        log.warn({ remote: req.socket.remoteAddress }, "telegram webhook request with a wrong secret refused");
        res.writeHead(401).end();
        return;
      }
      let update: unknown;
      try {
        update = await readJson(req);
      } catch (error) {
        log.warn({ err: (error as Error).message }, "telegram webhook body unreadable");
        res.writeHead(400).end();
        return;
      }
      await options.handle(update);
      res.writeHead(200).end();
    })().catch((error: unknown) => {
      log.error({ err: (error as Error).message }, "telegram webhook request failed");
      if (!res.headersSent) res.writeHead(500).end();
    });
  };
}

/** Starts the receiver (mounts it on the shared server, or listens); resolves once it takes requests. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const handler = webhookRequestHandler(options);
  if (options.routes) {
    const unmount = options.routes.mount("POST", options.path, handler);
    const local = new URL(options.routes.localUrl);
    return { address: { host: local.hostname, port: Number(local.port) }, close: async () => unmount() };
  }
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== options.path) {
      res.writeHead(404).end();
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const bound = server.address();
  const port = typeof bound === "object" && bound ? bound.port : options.port;
  return {
    address: { host: options.host, port },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
