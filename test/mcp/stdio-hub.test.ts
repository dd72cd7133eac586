import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, silentLogger } from "../../src/observe/logger.ts";
import { McpHub } from "../../src/tools/mcp/hub.ts";
import { FAST_BACKOFF, FIXTURE_SERVER, mcpConfig, toolContext, toolNamed, waitFor } from "./helpers.ts";

const hubs: McpHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
});

function fixtureHub(server: Record<string, unknown> = {}, extraServers: Record<string, unknown> = {}): McpHub {
  const config = mcpConfig({
    servers: { demo: { command: process.execPath, args: [FIXTURE_SERVER], ...server }, ...extraServers },
  });
  const hub = new McpHub(config, silentLogger(), { backoff: FAST_BACKOFF });
  hubs.push(hub);
  return hub;
}

describe("MCP hub over stdio", () => {
  it("lists the server's tools with prefixed names, schemas, owner and risk from config", async () => {
    const hub = fixtureHub({ readOnlyTools: ["echo"] });
    await hub.start();
    const tools = hub.tools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ["demo__add", "demo__crash", "demo__deploy", "demo__die", "demo__echo", "demo__fail", "demo__image", "demo__progress", "demo__sample", "demo__slow"],
    );
    const echo = toolNamed(tools, "demo__echo");
    expect(echo.owner).toBe("mcp:demo");
    expect(echo.risk).toBe("read");
    expect(echo.description).toBe("Echo the given text back unchanged.");
    expect(echo.jsonSchema).toMatchObject({ type: "object", properties: { text: { type: "string" } }, required: ["text"] });
    expect(toolNamed(tools, "demo__add").risk).toBe("write");
    expect(hub.status()).toEqual([
      expect.objectContaining({ name: "demo", transport: "stdio", state: "connected", tools: expect.arrayContaining(["demo__echo"]) }),
    ]);
  });

  it("marks every tool read-only when the server is configured readOnly", async () => {
    const hub = fixtureHub({ readOnly: true });
    await hub.start();
    expect(new Set(hub.tools().map((t) => t.risk))).toEqual(new Set(["read"]));
  });

  it("returns text, structured content and binary references as the result text", async () => {
    const hub = fixtureHub();
    await hub.start();
    const tools = hub.tools();
    expect(await toolNamed(tools, "demo__echo").execute({ text: "hello there" }, toolContext())).toEqual({
      success: true,
      output: "hello there",
    });
    const sum = await toolNamed(tools, "demo__add").execute({ a: 2, b: 3 }, toolContext());
    expect(sum.success).toBe(true);
    expect(sum.output).toContain("the sum is 5");
    expect(JSON.parse(sum.output.slice(sum.output.indexOf("{")))).toEqual({ sum: 5 });
    const image = await toolNamed(tools, "demo__image").execute({}, toolContext());
    expect(image.output).toBe("here is the chart\n[image: image/png, 1234 bytes]\n[resource: file:///reports/q3.pdf]");
  });

  it("turns an isError result into a failure carrying the server's message", async () => {
    const hub = fixtureHub();
    await hub.start();
    const result = await toolNamed(hub.tools(), "demo__fail").execute({}, toolContext());
    expect(result.success).toBe(false);
    expect(result.error).toBe("it broke on purpose");
  });

  it("fails a call that takes longer than the server's timeout", async () => {
    const hub = fixtureHub({ timeoutMs: 300 });
    await hub.start();
    const started = Date.now();
    const result = await toolNamed(hub.tools(), "demo__slow").execute({ ms: 5_000 }, toolContext());
    expect(result.success).toBe(false);
    expect(result.error).toBe("MCP tool slow on server demo timed out after 300 ms");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("reports a crash mid-call as a failed result, then reconnects and serves calls again", async () => {
    const hub = fixtureHub();
    await hub.start();
    const crashed = await toolNamed(hub.tools(), "demo__crash").execute({}, toolContext());
    expect(crashed.success).toBe(false);
    expect(crashed.error).toBe("MCP server demo stopped during the call to crash: the server process exited with code 3");
    await waitFor(() => hub.status()[0].state === "connected");
    const echoed = await toolNamed(hub.tools(), "demo__echo").execute({ text: "back again" }, toolContext());
    expect(echoed).toEqual({ success: true, output: "back again" });
  });

  it("names the signal that killed a server mid-call, not the last line it printed", async () => {
    const hub = fixtureHub();
    await hub.start();
    const killed = await toolNamed(hub.tools(), "demo__die").execute({}, toolContext());
    expect(killed.error).toBe("MCP server demo stopped during the call to die: the server process was killed by SIGKILL");
    expect(killed.error).not.toContain("ready to serve");
  });

  it("keeps a dead server's known tools, answering unavailable until it can start again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-mcp-"));
    const refuseFile = join(dir, "locked");
    try {
      const hub = fixtureHub({ env: { FIXTURE_REFUSE_FILE: refuseFile } });
      await hub.start();
      writeFileSync(refuseFile, "");
      await toolNamed(hub.tools(), "demo__crash").execute({}, toolContext());
      await waitFor(() => (hub.status()[0].lastError ?? "").includes("database locked"));
      expect(hub.status()[0].state).not.toBe("connected");
      await waitFor(() => hub.status()[0].state === "failed");
      const result = await toolNamed(hub.tools(), "demo__echo").execute({ text: "anyone?" }, toolContext());
      expect(result.success).toBe(false);
      expect(result.error).toMatch(/^MCP server demo is unavailable: .*database locked/);
      rmSync(refuseFile);
      await waitFor(() => hub.status()[0].state === "connected");
      expect(await toolNamed(hub.tools(), "demo__echo").execute({ text: "yes" }, toolContext())).toEqual({ success: true, output: "yes" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reports a server that cannot start without failing start, and keeps the others", async () => {
    const hub = fixtureHub({}, {
      broken: { command: process.execPath, args: ["-e", "process.stderr.write('missing API key\\n'); process.exit(2)"] },
      absent: { command: "/nonexistent/gatehouse-mcp-server" },
    });
    await expect(hub.start()).resolves.toBeUndefined();
    const byName = Object.fromEntries(hub.status().map((s) => [s.name, s]));
    expect(byName.demo.state).toBe("connected");
    expect(byName.broken.state).toMatch(/failed|connecting/);
    expect(byName.broken.lastError).toContain("missing API key");
    expect(byName.absent.lastError).toContain("ENOENT");
    expect(hub.tools().every((t) => t.owner === "mcp:demo")).toBe(true);
  });

  it("stops waiting for a call when the turn is cancelled", async () => {
    const hub = fixtureHub();
    await hub.start();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await toolNamed(hub.tools(), "demo__slow").execute({ ms: 5_000 }, toolContext(controller.signal));
    expect(result).toMatchObject({ success: false, error: "the call to slow was cancelled before MCP server demo answered" });
    expect(hub.status()[0].state).toBe("connected");
  });

  it("keeps retrying a server that fails to start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-mcp-"));
    const attempts = join(dir, "attempts");
    try {
      const script = `require("fs").appendFileSync(${JSON.stringify(attempts)}, "x"); process.exit(1)`;
      const hub = fixtureHub({ command: process.execPath, args: ["-e", script] });
      await hub.start();
      await waitFor(() => existsSync(attempts) && readFileSync(attempts, "utf8").length >= 3);
      expect(hub.tools()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("starts a lazy server only when first used", async () => {
    const hub = fixtureHub({ lazy: true });
    await hub.start();
    expect(hub.status()[0].state).toBe("stopped");
    await hub.ready();
    expect(hub.status()[0].state).toBe("connected");
    expect(hub.tools()).toHaveLength(10);
  });

  it("keeps the first of two tools whose model-safe names collide, and says so in the log once", async () => {
    const lines: string[] = [];
    const log = createLogger({ level: "info", destinations: [{ write: (l: string) => void lines.push(l) }] });
    const loose = join(import.meta.dirname, "fixtures", "loose-schema-server.ts");
    const hub = new McpHub(mcpConfig({ servers: { fx: { command: process.execPath, args: [loose] } } }), log, { backoff: FAST_BACKOFF });
    hubs.push(hub);
    await hub.start();
    for (let i = 0; i < 3; i++) {
      expect(hub.tools().filter((t) => t.name === "fx__ship_it").map((t) => t.description)).toEqual(["Ship it."]);
      hub.status();
    }
    const warned = lines.map((l) => JSON.parse(l) as { msg: string; tool?: string; as?: string }).filter((l) => /collide|name is that of another/.test(l.msg));
    expect(warned.map((l) => [l.tool, l.as])).toEqual([["ship_it", "fx__ship_it"]]);
  });
});
