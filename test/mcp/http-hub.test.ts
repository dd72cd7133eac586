import { afterEach, describe, expect, it } from "vitest";
import { createLogger, silentLogger } from "../../src/observe/logger.ts";
import { McpHub } from "../../src/tools/mcp/hub.ts";
import { startHttpFixture, type HttpFixture } from "./fixtures/http-server.ts";
import { FAST_BACKOFF, mcpConfig, toolContext, toolNamed, waitFor } from "./helpers.ts";

const TOKEN = "fixture-token-4f9a2c";
let fixture: HttpFixture | undefined;
let hub: McpHub | undefined;

afterEach(async () => {
  await hub?.close();
  await fixture?.close();
  hub = undefined;
  fixture = undefined;
});

function httpHub(url: string, headers: Record<string, string>, extra: Record<string, unknown> = {}): McpHub {
  const config = mcpConfig({ servers: { remote: { url, headers, ...extra } } });
  hub = new McpHub(config, silentLogger(), { backoff: FAST_BACKOFF });
  return hub;
}

describe("MCP hub over Streamable HTTP", () => {
  it("connects with the configured headers, lists the tools and calls them", async () => {
    fixture = await startHttpFixture(TOKEN);
    const remote = httpHub(fixture.url, { Authorization: `Bearer ${TOKEN}` });
    await remote.start();
    expect(remote.status()).toEqual([expect.objectContaining({ name: "remote", transport: "http", state: "connected" })]);
    const tools = remote.tools();
    expect(tools.map((t) => t.name).sort()).toEqual(["remote__add", "remote__deploy", "remote__echo", "remote__fail", "remote__image", "remote__progress", "remote__sample", "remote__slow"]);
    expect(toolNamed(tools, "remote__echo").owner).toBe("mcp:remote");
    expect(await toolNamed(tools, "remote__echo").execute({ text: "over http" }, toolContext())).toEqual({ success: true, output: "over http" });
    const failed = await toolNamed(tools, "remote__fail").execute({}, toolContext());
    expect(failed).toMatchObject({ success: false, error: "it broke on purpose" });
  });

  it("logs each server with its tools and never logs the configured header secret", async () => {
    fixture = await startHttpFixture(TOKEN);
    const lines: string[] = [];
    const log = createLogger({ level: "debug", destinations: [{ write: (line: string) => void lines.push(line) }] });
    const config = mcpConfig({ servers: { remote: { url: fixture.url, headers: { Authorization: `Bearer ${TOKEN}` } } } });
    hub = new McpHub(config, log, { backoff: FAST_BACKOFF });
    await hub.start();
    const connected = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "MCP server connected");
    expect(connected).toMatchObject({ mcpServer: "remote", transport: "http", tools: expect.arrayContaining(["echo", "add"]) });
    await toolNamed(hub.tools(), "remote__echo").execute({ text: `token is ${TOKEN}` }, toolContext());
    log.info({ echoed: TOKEN }, "something mentioning the token");
    expect(lines.join("")).not.toContain(TOKEN);
  });

  it("times out a slow call over HTTP", async () => {
    fixture = await startHttpFixture(TOKEN);
    const remote = httpHub(fixture.url, { Authorization: `Bearer ${TOKEN}` }, { timeoutMs: 200 });
    await remote.start();
    const result = await toolNamed(remote.tools(), "remote__slow").execute({ ms: 3_000 }, toolContext());
    expect(result).toMatchObject({ success: false, error: "MCP tool slow on server remote timed out after 200 ms" });
  });

  it("reports a server that rejects the credentials as failed, without the token in the error", async () => {
    fixture = await startHttpFixture(TOKEN);
    const remote = httpHub(fixture.url, { Authorization: "Bearer wrong-token-123456" });
    await remote.start();
    const [status] = remote.status();
    expect(status.state).toMatch(/failed|connecting/);
    expect(status.lastError).toMatch(/401/);
    expect(status.lastError).not.toContain("wrong-token-123456");
    expect(remote.tools()).toEqual([]);
  });

  it("answers unavailable when the server goes away, and recovers when it is back on the same address", async () => {
    fixture = await startHttpFixture(TOKEN);
    const url = fixture.url;
    const remote = httpHub(url, { Authorization: `Bearer ${TOKEN}` });
    await remote.start();
    await fixture.close();
    const lost = await toolNamed(remote.tools(), "remote__echo").execute({ text: "hello?" }, toolContext());
    expect(lost.success).toBe(false);
    expect(lost.error).toMatch(/^MCP server remote stopped during the call to echo/);
    const down = await toolNamed(remote.tools(), "remote__echo").execute({ text: "hello?" }, toolContext());
    expect(down.error).toMatch(/^MCP server remote is unavailable/);
    fixture = await startHttpFixture(TOKEN, Number(new URL(url).port));
    await waitFor(() => remote.status()[0].state === "connected");
    expect(await toolNamed(remote.tools(), "remote__echo").execute({ text: "hi" }, toolContext())).toEqual({ success: true, output: "hi" });
  });
});
