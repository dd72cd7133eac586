/**
 * The official reference server, @modelcontextprotocol/server-everything, over stdio and over
 * Streamable HTTP: images, progress, roots, elicitation, annotations and invalid arguments as it really sends them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { silentLogger } from "../../src/observe/logger.ts";
import { McpHub } from "../../src/tools/mcp/hub.ts";
import { resultText } from "../../src/engine/record.ts";
import { freePort } from "../support/free-port.ts";
import { mcpConfig, toolContext, toolNamed, waitFor } from "./helpers.ts";
import type { Question, QuestionAnswer } from "../../src/approval/questions.ts";

const packageJson = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json");
const EVERYTHING_BIN = join(dirname(packageJson), "dist", "index.js");
const WORKSPACE = join(tmpdir(), "gatehouse-everything-workspace");

let hub: McpHub | undefined;
let httpServer: ChildProcess | undefined;
afterEach(async () => {
  await hub?.close();
  hub = undefined;
  httpServer?.kill("SIGTERM");
  httpServer = undefined;
});

async function stdioHub(extra: Record<string, unknown> = {}): Promise<McpHub> {
  const config = mcpConfig({ servers: { every: { command: process.execPath, args: [EVERYTHING_BIN, "stdio"], ...extra } } });
  hub = new McpHub(config, silentLogger(), { workspace: WORKSPACE });
  await hub.start();
  expect(hub.status()[0]).toMatchObject({ state: "connected" });
  return hub;
}

async function httpHub(extra: Record<string, unknown> = {}): Promise<McpHub> {
  const port = await freePort();
  httpServer = spawn(process.execPath, [EVERYTHING_BIN, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  let banner = "";
  httpServer.stderr?.on("data", (chunk: Buffer) => (banner += chunk.toString("utf8")));
  await waitFor(() => banner.includes("listening"), 10_000);
  const config = mcpConfig({ servers: { every: { url: `http://127.0.0.1:${port}/mcp`, ...extra } } });
  hub = new McpHub(config, silentLogger(), { workspace: WORKSPACE });
  await hub.start();
  expect(hub.status()[0]).toMatchObject({ state: "connected" });
  return hub;
}

for (const [transport, connect] of [["stdio", stdioHub], ["Streamable HTTP", httpHub]] as const) {
  describe(`server-everything over ${transport}`, () => {
    it("returns its tiny image as a reference, without the base64", async () => {
      const image = await toolNamed((await connect()).tools(), "every__get-tiny-image").execute({}, toolContext());
      expect(image.success).toBe(true);
      expect(image.output).toMatch(/^Here's the image you requested:\n\[image: image\/png, \d+ bytes\]\nThe image above is the MCP logo\.$/);
      expect(image.output).not.toContain("iVBORw0KGgo");
    });

    it("passes progress on as the call's progress text and keeps a call alive past its timeout while it reports", async () => {
      const tools = (await connect({ timeoutMs: 1_000 })).tools();
      const progress: string[] = [];
      const ctx = { ...toolContext(), onProgress: (text: string) => progress.push(text) };
      // Four steps of 0.6 s: 2.4 s in all, more than the 1 s timeout, each step within it.
      const result = await toolNamed(tools, "every__trigger-long-running-operation").execute({ duration: 2.4, steps: 4 }, ctx);
      expect(result).toMatchObject({ success: true, output: expect.stringContaining("Long running operation completed") });
      expect(progress[0]).toBe("1/4");
      expect(progress.length).toBeGreaterThanOrEqual(1);
    });

    it("is told the workspace as its root", async () => {
      const roots = await toolNamed((await connect()).tools(), "every__get-roots-list").execute({}, toolContext());
      expect(roots.output).toContain(pathToFileURL(WORKSPACE).href);
    });

    it("passes its elicitation to the person behind the call and the answer back", async () => {
      const asked: Question[] = [];
      const ask = async (question: Question): Promise<QuestionAnswer> => {
        asked.push(question);
        return { action: "accept", values: { name: "Ada", integer: 7 }, by: { id: "U1" } };
      };
      const result = await toolNamed((await connect()).tools(), "every__trigger-elicitation-request").execute({}, { ...toolContext(), ask });
      expect(asked[0]).toMatchObject({ kind: "form", from: 'MCP server "every"', title: "Please provide inputs for the following fields:" });
      expect(result.output).toContain("- Name: Ada");
      expect(result.output).toContain("- Favorite Integer: 7");
    });
  });
}

describe("server-everything tool risks and failures", () => {
  it("runs read-only closed-world tools without asking and makes open-world ones ask", async () => {
    const tools = (await stdioHub()).tools();
    expect(toolNamed(tools, "every__get-sum").risk).toBe("read");
    expect(toolNamed(tools, "every__gzip-file-as-resource").risk).toBe("write");
  });

  it("lets the server's config override what the annotations say", async () => {
    const tools = (await stdioHub({ risk: "exec", toolRisk: { "get-sum": "read" } })).tools();
    expect(toolNamed(tools, "every__get-tiny-image").risk).toBe("exec");
    expect(toolNamed(tools, "every__get-sum").risk).toBe("read");
  });

  it("stops a call that reports progress forever at the hard maximum", async () => {
    const tools = (await stdioHub({ timeoutMs: 1_000, maxCallMs: 1_500 })).tools();
    const started = Date.now();
    const result = await toolNamed(tools, "every__trigger-long-running-operation").execute({ duration: 5, steps: 20 }, toolContext());
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/still working after 1500 ms, the longest a call may take/);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it("reports an invalid argument once, in the server's words", async () => {
    const tools = (await stdioHub()).tools();
    const result = await toolNamed(tools, "every__get-sum").execute({ a: "one", b: 2 }, toolContext());
    expect(result.success).toBe(false);
    const text = resultText(result);
    expect(text).toMatch(/invalid/i);
    const firstLine = text.split("\n")[0]!.replace(/^Error: /, "");
    expect(text.indexOf(firstLine)).toBe(text.lastIndexOf(firstLine));
  });
});
