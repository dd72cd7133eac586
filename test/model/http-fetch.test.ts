import { afterEach, describe, expect, it } from "vitest";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { createHttpFetch } from "../../src/model/http-fetch.ts";

let server: Server | undefined;
const sockets = new Set<Socket>();

async function serve(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const seen: Array<{ url: string; headers: IncomingMessage["headers"]; body: string }> = [];
  let connections = 0;
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      seen.push({ url: req.url!, headers: req.headers, body });
      handle(req, res, body);
    });
  });
  server.on("connection", (socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, connections: () => connections };
}

afterEach(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

const post = (body: string, extra: RequestInit = {}): RequestInit => ({
  method: "POST", headers: new Headers({ "content-type": "application/json", authorization: "Bearer k" }), body, ...extra,
});

async function readAll(response: Response): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

describe("the model client's fetch", () => {
  it("posts the request with its headers and reads the answer, on one kept-alive connection", async () => {
    const { base, seen, connections } = await serve((_req, res, body) => {
      res.writeHead(200, { "content-type": "application/json", "x-request-id": "req-1" });
      res.end(JSON.stringify({ echo: JSON.parse(body) }));
    });
    const f = createHttpFetch();
    const first = await f(`${base}/v1/chat/completions`, post('{"model":"m","text":"héllo"}'));
    expect(first.status).toBe(200);
    expect(first.headers.get("x-request-id")).toBe("req-1");
    expect(await first.json()).toEqual({ echo: { model: "m", text: "héllo" } });
    const second = await f(`${base}/v1/chat/completions`, post("{}"));
    expect(await second.json()).toEqual({ echo: {} });
    expect(seen[0]!.headers.authorization).toBe("Bearer k");
    expect(Number(seen[0]!.headers["content-length"])).toBe(Buffer.byteLength('{"model":"m","text":"héllo"}'));
    expect(connections()).toBe(1);
  });

  it("hands over each piece of a streamed answer as it comes, before the server has finished", async () => {
    let finish!: () => void;
    const { base } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      finish = () => res.end("data: two\n\n");
    });
    const response = await createHttpFetch()(`${base}/v1/chat/completions`, post("{}"));
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: one\n\n");
    finish();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: two\n\n");
    expect((await reader.read()).done).toBe(true);
  });

  it("fails the read, rather than ending the body, when the connection is cut mid-answer", async () => {
    const { base } = await serve((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: partial\n\n");
      setTimeout(() => req.socket.destroy(), 50);
    });
    const response = await createHttpFetch()(`${base}/v1/chat/completions`, post("{}"));
    await expect(readAll(response)).rejects.toThrow(TypeError);
  });

  it("stops at an abort, mid-answer too, with an AbortError, and drops the connection", async () => {
    let closed = false;
    const { base } = await serve((req, res) => {
      req.socket.on("close", () => (closed = true));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: partial\n\n");
    });
    const controller = new AbortController();
    const response = await createHttpFetch()(`${base}/v1/chat/completions`, post("{}", { signal: controller.signal }));
    const reading = readAll(response);
    setTimeout(() => controller.abort(), 50);
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
    await new Promise((r) => setTimeout(r, 100));
    expect(closed).toBe(true);

    const before = new AbortController();
    before.abort();
    await expect(createHttpFetch()(`${base}/v1/x`, post("{}", { signal: before.signal }))).rejects.toMatchObject({ name: "AbortError" });
  });

  it("follows a redirect, sending the body again, and decodes a compressed answer", async () => {
    const { base, seen } = await serve((req, res, body) => {
      if (req.url === "/v1/chat/completions") {
        res.writeHead(307, { location: "/moved/chat/completions" });
        return res.end();
      }
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(JSON.stringify({ got: body })));
    });
    const response = await createHttpFetch()(`${base}/v1/chat/completions`, post('{"a":1}'));
    expect(await response.json()).toEqual({ got: '{"a":1}' });
    expect(seen.map((s) => s.url)).toEqual(["/v1/chat/completions", "/moved/chat/completions"]);
  });

  it("answers a status without a body with an empty Response, and a refused connection like Node's fetch", async () => {
    const { base } = await serve((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const empty = await createHttpFetch()(`${base}/v1/x`, post("{}"));
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe("");

    await new Promise((r) => server!.close(r));
    for (const s of sockets) s.destroy();
    server = undefined;
    const error = await createHttpFetch()(`${base}/v1/x`, post("{}")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(String((error as TypeError).cause)).toMatch(/ECONNREFUSED/);
  });
});
