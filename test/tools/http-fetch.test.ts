import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpFetchTool } from "../../src/tools/builtin/http-fetch.ts";
import { isNonPublicAddress } from "../../src/tools/network-guard.ts";
import { contextFor } from "./context.ts";

let server: http.Server;
let base: string;
let port: number;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === "/hello") {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      res.end("hello from the test server");
    } else if (req.url === "/huge") {
      // Endless body: only a reader that stops at its limit finishes.
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = "x".repeat(16 * 1024);
      const pump = () => {
        while (res.write(chunk)) {
          /* keep the socket full */
        }
      };
      res.on("drain", pump);
      pump();
      req.on("close", () => res.destroy());
    } else if (req.url === "/slow") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
      const timer = setTimeout(() => res.end("done"), 10_000);
      req.on("close", () => clearTimeout(timer));
    } else if (req.url === "/to-localhost") {
      res.writeHead(302, { location: `http://localhost:${port}/hello` });
      res.end();
    } else if (req.url === "/missing") {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("no such page");
    } else {
      res.writeHead(500);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const ctx = () => contextFor("/tmp");

describe("http_fetch refuses the bot's own network by default", () => {
  const tool = httpFetchTool({ timeoutMs: 2_000 });
  for (const url of [
    "http://127.0.0.1/",
    "http://localhost/",
    "http://10.1.2.3/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://192.168.0.10/",
    "http://[fd00::1]/",
    "http://0x7f.1/",
  ]) {
    it(`refuses ${url}`, async () => {
      const result = await tool.execute({ url }, ctx());
      expect(result.success).toBe(false);
      expect(result.error).toMatch(/^refused to fetch .*only public addresses can be fetched$/);
    });
  }

  it("refuses a host name when any one of its addresses is private", async () => {
    const mixed = httpFetchTool({ resolve: async () => ["93.184.216.34", "10.0.0.7"] });
    const result = await mixed.execute({ url: "https://example.test/" }, ctx());
    expect(result.error).toMatch(/example\.test \(it resolves to 10\.0\.0\.7\)/);
  });

  it("refuses a redirect that leads to a private address", async () => {
    const result = await httpFetchTool({ allowHosts: ["127.0.0.1"] }).execute({ url: `${base}/to-localhost` }, ctx());
    expect(result.error).toMatch(/^refused to fetch localhost/);
  });

  it("refuses schemes other than http and https", async () => {
    const result = await tool.execute({ url: "file:///etc/passwd" }, ctx());
    expect(result.error).toBe("only http and https URLs can be fetched, not file");
  });
});

describe("http_fetch on an allowed private network", () => {
  const tool = httpFetchTool({ allowPrivateNetwork: true, timeoutMs: 2_000, maxBytes: 50_000 });

  it("returns status, content type and body", async () => {
    const result = await tool.execute({ url: `${base}/hello` }, ctx());
    expect(result.success).toBe(true);
    expect(result.output).toBe(`GET ${base}/hello → 200 OK\ncontent-type: text/plain; charset=utf-8\n\nhello from the test server`);
  });

  it("fetches a host named in allowHosts without opening the whole network", async () => {
    const result = await httpFetchTool({ allowHosts: ["127.0.0.1"] }).execute({ url: `${base}/hello` }, ctx());
    expect(result.success).toBe(true);
  });

  it("stops reading at the size limit and says the body was cut", async () => {
    const started = Date.now();
    const result = await tool.execute({ url: `${base}/huge` }, ctx());
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result.success).toBe(true);
    expect(result.output).toMatch(/\n\[body cut at 50000 bytes\]$/);
    expect(result.output.split("\n\n")[1].replace(/\n\[body cut.*$/, "")).toHaveLength(50_000);
  });

  it("gives up after its timeout", async () => {
    const quick = httpFetchTool({ allowPrivateNetwork: true, timeoutMs: 300 });
    const result = await quick.execute({ url: `${base}/slow` }, ctx());
    expect(result).toMatchObject({ success: false, error: `timed out after 300 ms fetching ${base}/slow` });
  });

  it("reports an error status as a failure, with the body", async () => {
    const result = await tool.execute({ url: `${base}/missing` }, ctx());
    expect(result).toMatchObject({ success: false, error: "HTTP 404 Not Found" });
    expect(result.output).toMatch(/no such page$/);
  });

  it("stops when the turn is cancelled", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await tool.execute({ url: `${base}/slow` }, contextFor("/tmp", controller.signal));
    expect(result.error).toMatch(/^cancelled while fetching/);
  });

  it("keeps credentials in the URL out of its messages", async () => {
    const result = await httpFetchTool({ timeoutMs: 2_000 }).execute({ url: "http://admin:hunter2@127.0.0.1/" }, ctx());
    expect(result.output).not.toContain("hunter2");
    expect(tool.hint?.({ url: "https://admin:hunter2@example.com/x" })).toBe("https://example.com/x");
  });
});

describe("isNonPublicAddress", () => {
  it("judges IPv4-mapped, NAT64 and 6to4 addresses by the IPv4 inside", () => {
    expect(isNonPublicAddress("::ffff:10.0.0.1")).toBe(true);
    expect(isNonPublicAddress("64:ff9b::a9fe:a9fe")).toBe(true);
    expect(isNonPublicAddress("2002:c0a8:0101::1")).toBe(true);
    expect(isNonPublicAddress("::ffff:93.184.216.34")).toBe(false);
    expect(isNonPublicAddress("2606:4700:4700::1111")).toBe(false);
    expect(isNonPublicAddress("8.8.8.8")).toBe(false);
    expect(isNonPublicAddress("fe80::1%eth0")).toBe(true);
  });
});
