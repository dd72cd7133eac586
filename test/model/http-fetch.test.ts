import { afterEach, describe, expect, it } from "vitest";
import { createServer, type IncomingMessage } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { execFile } from "node:child_process";
import { gzipSync } from "node:zlib";
import { createHttpFetch } from "../../src/model/http-fetch.ts";
import { startRecordingServer, type RecordingServer } from "../support/recording-server.ts";

let server: RecordingServer | undefined;
/** Sockets a test opens besides the server's (a proxy's tunnels), dropped at the end. */
const sockets = new Set<Socket>();

async function serve(handle: Parameters<typeof startRecordingServer>[0]) {
  server = await startRecordingServer(handle);
  return server;
}

afterEach(async () => {
  for (const s of sockets) s.destroy();
  sockets.clear();
  await server?.closeAll();
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

    await server!.closeAll();
    const error = await createHttpFetch()(`${base}/v1/x`, post("{}")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(String((error as TypeError).cause)).toMatch(/ECONNREFUSED/);
  });
});

describe("the model client's and the Bot API client's fetch behind a proxy", () => {
  it("go through the proxy of HTTP_PROXY when NODE_USE_ENV_PROXY asks for it", async () => {
    // Where each request reached the target from: the proxy's side of a tunnel, or the client itself.
    const from: number[] = [];
    const { base: target } = await serve((req, res) => {
      from.push(req.socket.remotePort!);
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"ok":true,"result":"answered"}');
    });
    // A proxy as Node's fetch uses one: a CONNECT tunnel to the target.
    const tunnels: string[] = [];
    const tunnelPorts = new Set<number>();
    const proxy = createServer((_req, res) => res.writeHead(405).end());
    proxy.on("connect", (req: IncomingMessage, socket: Socket, head: Buffer) => {
      tunnels.push(req.url!);
      sockets.add(socket);
      const [host, port] = req.url!.split(":");
      const upstream = connect(Number(port), host!, () => {
        tunnelPorts.add(upstream.localPort!);
        socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      sockets.add(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const root = new URL("../..", import.meta.url).pathname;
      const script = `
        const { createHttpFetch } = await import(${JSON.stringify(`${root}src/model/http-fetch.ts`)});
        const { createBotApiFetch } = await import(${JSON.stringify(`${root}adapters/telegram/bot-api-fetch.ts`)});
        const init = { method: "POST", headers: { "content-type": "application/json" }, body: "{}" };
        const a = await (await createHttpFetch()(${JSON.stringify(`${target}/v1/chat/completions`)}, init)).json();
        const b = await (await createBotApiFetch()(${JSON.stringify(`${target}/botT/getMe`)}, init)).json();
        console.log(JSON.stringify([a.result, b.result]));
        process.exit(0);`;
      const out = await new Promise<string>((resolve, reject) =>
        execFile(process.execPath, ["--input-type=module", "-e", script], {
          env: { ...process.env, NODE_USE_ENV_PROXY: "1", HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, NO_PROXY: "" },
          timeout: 20_000,
        }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
      );
      expect(JSON.parse(out)).toEqual(["answered", "answered"]);
      expect(tunnels.length).toBeGreaterThanOrEqual(1);
      expect(tunnels.every((t) => target.endsWith(t))).toBe(true);
      expect(from).toHaveLength(2);
      expect(from.every((port) => tunnelPorts.has(port))).toBe(true);
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  });
});
