import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpFetchTool } from "../../src/tools/builtin/http-fetch.ts";
import { isNonPublicAddress } from "../../src/tools/network-guard.ts";
import { contextFor } from "./context.ts";

let server: http.Server;
let base: string;
let port: number;
/** Paths the local test server was asked for, so a test can prove a request never reached it. */
const seen: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.url ?? "");
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
    } else if (req.url === "/host") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`host header: ${req.headers.host}`);
    } else if (req.url === "/to-named") {
      res.writeHead(302, { location: `http://next.test:${port}/host` });
      res.end();
    } else if (req.url === "/loop") {
      res.writeHead(302, { location: "/loop" });
      res.end();
    } else if (req.url === "/gzip") {
      const packed = /gzip/.test(String(req.headers["accept-encoding"]));
      res.writeHead(200, { "content-type": "text/plain", ...(packed ? { "content-encoding": "gzip" } : {}) });
      res.end(packed ? gzipSync("unpacked text") : "sent without compression");
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

describe("http_fetch connects to exactly the address it checked", () => {
  it("is not steered to a local server by a name that answers a public address for the check and loopback afterwards", async () => {
    // The injected resolver flips to loopback after its first answer, and the system resolver
    // says loopback for "localhost": a second lookup of either kind would reach the test server.
    // The first answer is a documentation address (never routed, and no longer public for the guard),
    // so the name is allowed by name: what matters is that the connection goes to that first answer.
    let lookups = 0;
    const rebinding = httpFetchTool({
      timeoutMs: 1_000,
      allowHosts: ["localhost"],
      resolve: async () => (lookups++ === 0 ? ["192.0.2.1"] : ["127.0.0.1"]),
    });
    const result = await rebinding.execute({ url: `http://localhost:${port}/rebound` }, ctx());
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^(could not fetch|timed out after)/);
    expect(seen).not.toContain("/rebound");
    expect(lookups).toBe(1);
  });

  it("checks and pins every redirect hop to the address the resolver gave for it", async () => {
    const intranet = httpFetchTool({ allowPrivateNetwork: true, timeoutMs: 2_000, resolve: async () => ["127.0.0.1"] });
    const result = await intranet.execute({ url: `http://start.test:${port}/to-named` }, ctx());
    expect(result.success).toBe(true);
    expect(result.output).toMatch(new RegExp(`host header: next\\.test:${port}$`));
  });

  it("reaches a private server through a checked name, keeping the name in the Host header", async () => {
    const intranet = httpFetchTool({ allowPrivateNetwork: true, timeoutMs: 2_000, resolve: async () => ["127.0.0.1"] });
    const result = await intranet.execute({ url: `http://wiki.intranet.test:${port}/host` }, ctx());
    expect(result.success).toBe(true);
    expect(result.output).toMatch(new RegExp(`host header: wiki\\.intranet\\.test:${port}$`));
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

  it("stops following redirects after its limit", async () => {
    const result = await httpFetchTool({ allowPrivateNetwork: true, maxRedirects: 2 }).execute({ url: `${base}/loop` }, ctx());
    expect(result.error).toBe(`stopped after 2 redirects at ${base}/loop`);
  });

  it("unpacks a gzip-compressed body", async () => {
    const result = await tool.execute({ url: `${base}/gzip` }, ctx());
    expect(result.output).toMatch(/\n\nunpacked text$/);
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
    const token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    const hint = tool.hint?.({ url: `https://api.example.com/v1/repositories/some-owner/some/path?access=${token}&x=1` });
    expect(hint).not.toContain(token.slice(0, 8));
  });
});

// A throwaway self-signed certificate for secure.test (valid 2020-2120), trusted only inside this file.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg0A+Qi1pu2K4Uoesm
SEM/ltKvzlCMwB789slLeIij8RShRANCAARPqqlPJ8vGjNRpp0zRZalzKWCy3eh1
brEG6QoPERK5vmFW8PIb+lLQYlyiN5chbUAT6b2HmMzaCDAbLC3QpWvL
-----END PRIVATE KEY-----`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBZzCCAQ2gAwIBAgIBATAKBggqhkjOPQQDAjAWMRQwEgYDVQQDDAtzZWN1cmUu
dGVzdDAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAwMDAwMFowFjEUMBIGA1UE
AwwLc2VjdXJlLnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARPqqlPJ8vG
jNRpp0zRZalzKWCy3eh1brEG6QoPERK5vmFW8PIb+lLQYlyiN5chbUAT6b2HmMza
CDAbLC3QpWvLo0owSDAWBgNVHREEDzANggtzZWN1cmUudGVzdDAPBgNVHRMBAf8E
BTADAQH/MB0GA1UdDgQWBBQ42IfTSP3dxzBeFAXHDp4/KG6MpDAKBggqhkjOPQQD
AgNIADBFAiBcnqz8xKNzYCmVg31Uh7ED2Yu2zPNGy5weWfMFMCJZyQIhAJMxv2uz
b3ypPACU62rUY5+PQThZo0T5xB/3sz/qIWvd
-----END CERTIFICATE-----`;

describe("http_fetch over https to a pinned address", () => {
  let secure: https.Server;
  let securePort: number;
  const defaultCAs = tls.getCACertificates("default");

  beforeAll(async () => {
    tls.setDefaultCACertificates([...defaultCAs, TEST_CERT]);
    secure = https.createServer({ key: TEST_KEY, cert: TEST_CERT }, (req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`server name: ${(req.socket as tls.TLSSocket).servername}, host header: ${req.headers.host}`);
    });
    await new Promise<void>((resolve) => secure.listen(0, "127.0.0.1", resolve));
    securePort = (secure.address() as AddressInfo).port;
  });

  afterAll(async () => {
    tls.setDefaultCACertificates(defaultCAs);
    secure.closeAllConnections();
    await new Promise((resolve) => secure.close(resolve));
  });

  const tool = httpFetchTool({ allowPrivateNetwork: true, timeoutMs: 2_000, resolve: async () => ["127.0.0.1"] });

  it("sends the host name as TLS server name and Host header while connecting to the checked address", async () => {
    const result = await tool.execute({ url: `https://secure.test:${securePort}/` }, ctx());
    expect(result.success).toBe(true);
    expect(result.output).toMatch(new RegExp(`server name: secure\\.test, host header: secure\\.test:${securePort}$`));
  });

  it("refuses a certificate that does not name the host, though the address is the same", async () => {
    const result = await tool.execute({ url: `https://other.test:${securePort}/` }, ctx());
    expect(result.error).toBe(`could not fetch https://other.test:${securePort}/: ERR_TLS_CERT_ALTNAME_INVALID`);
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
