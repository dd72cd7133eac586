/**
 * The emulator's HTTP front: `/bot<token>/<method>` with JSON, urlencoded, multipart or query
 * parameters, the token check (401), unknown methods (404), injected faults, and the call record.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { fail } from "./methods.ts";
import type { EmulatorState } from "./state.ts";
import type { ApiAnswer, LongPoller, PollParams } from "./updates.ts";

/** A fault the next call of a method gets instead of its normal answer. */
export interface Fault {
  status: number;
  description?: string;
  retryAfter?: number;
  /** Only a call whose parameters this accepts gets the fault; the others pass (the fault waits). */
  when?: (params: Record<string, unknown>) => boolean;
}

const OBJECT_FIELDS = new Set(["reply_markup", "reply_parameters", "commands", "entities", "allowed_updates", "link_preview_options", "scope"]);

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Reads the parameters the way the Bot API does: query string, then the body in any of its three encodings. */
async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = {};
  const addText = (key: string, value: string) => {
    if (OBJECT_FIELDS.has(key)) {
      try {
        params[key] = JSON.parse(value);
        return;
      } catch {
        // Left as a string: the method's schema reports it as invalid.
      }
    }
    if (value === "true" || value === "false") params[key] = value === "true";
    else params[key] = value;
  };
  for (const [k, v] of url.searchParams) addText(k, v);
  const body = await readBody(req);
  if (body.length === 0) return params;
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  if (type.startsWith("application/json")) {
    const parsed: unknown = JSON.parse(body.toString("utf8"));
    if (typeof parsed === "object" && parsed !== null) Object.assign(params, parsed);
  } else if (type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data")) {
    const form = await new Response(body, { headers: { "content-type": type } }).formData();
    for (const [k, v] of form) if (typeof v === "string") addText(k, v);
  }
  return params;
}

function write(res: ServerResponse, answer: ApiAnswer): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(answer.status, { "content-type": "application/json" });
  res.end(JSON.stringify(answer.body));
}

export interface HttpApiDeps {
  state: EmulatorState;
  token: string;
  methods: Record<string, (raw: Record<string, unknown>) => ApiAnswer>;
  poller: LongPoller;
  faults: Map<string, Fault[]>;
}

/** Starts the Bot API server on 127.0.0.1, an ephemeral port. */
export async function startHttpApi(deps: HttpApiDeps): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => void handle(req, res));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!match) return write(res, fail(404, "Not Found"));
    const [, token, method] = match;
    let params: Record<string, unknown>;
    try {
      params = await readParams(req, url);
    } catch {
      return write(res, fail(400, "Bad Request: can't parse JSON object"));
    }
    const record = (answer: ApiAnswer) => {
      deps.state.calls.push({ method: method!, params, at: Date.now(), status: answer.status, response: answer.body });
      write(res, answer);
    };
    if (token !== deps.token) return record(fail(401, "Unauthorized"));
    const fault = takeFault(deps.faults.get(method!), params);
    if (fault) {
      const description = fault.description ?? (fault.status === 429 ? `Too Many Requests: retry after ${fault.retryAfter ?? 1}` : "Internal Server Error");
      return record(fail(fault.status, description, fault.retryAfter !== undefined ? { retry_after: fault.retryAfter } : undefined));
    }
    if (method === "getUpdates") {
      const closed = new Promise<void>((resolve) => res.on("close", () => resolve()));
      const num = (v: unknown) => (v === undefined || v === "" ? undefined : Number(v));
      const poll: PollParams = {
        ...(num(params.offset) !== undefined ? { offset: num(params.offset) } : {}),
        ...(num(params.limit) !== undefined ? { limit: num(params.limit) } : {}),
        ...(num(params.timeout) !== undefined ? { timeout: num(params.timeout) } : {}),
        ...(Array.isArray(params.allowed_updates) ? { allowed_updates: params.allowed_updates as string[] } : {}),
      };
      const answer = await deps.poller.poll(poll, closed);
      return record(answer);
    }
    const handler = deps.methods[method!];
    if (!handler) return record(fail(404, "Not Found: method not found"));
    record(handler(params));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("emulator did not bind");
  return { server, url: `http://127.0.0.1:${address.port}` };
}

/** The first fault waiting for this method that applies to a call with `params` (taken off the list). */
function takeFault(faults: Fault[] | undefined, params: Record<string, unknown>): Fault | undefined {
  const at = faults?.findIndex((f) => !f.when || f.when(params)) ?? -1;
  return at >= 0 ? faults!.splice(at, 1)[0] : undefined;
}
