import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { silentLogger } from "../../src/observe/logger.ts";
import { McpHub } from "../../src/tools/mcp/hub.ts";
import { mcpConfig, toolContext, toolNamed } from "./helpers.ts";

// The published filesystem server, run from node_modules as a real peer would be.
const packageJson = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/package.json");
const FILESYSTEM_BIN = join(dirname(packageJson), "dist", "index.js");

let folder: string;
let hub: McpHub;

beforeAll(async () => {
  folder = realpathSync(mkdtempSync(join(tmpdir(), "gatehouse-fs-")));
  writeFileSync(join(folder, "notes.txt"), "buy milk\n");
  const config = mcpConfig({
    servers: {
      fs: { command: process.execPath, args: [FILESYSTEM_BIN, folder], readOnlyTools: ["read_text_file", "list_directory"] },
    },
  });
  hub = new McpHub(config, silentLogger());
  await hub.start();
});

afterAll(async () => {
  await hub.close();
  rmSync(folder, { recursive: true, force: true });
});

describe("the published filesystem MCP server", () => {
  it("offers its tools under the server's prefix with their schemas and configured risks", () => {
    const tools = hub.tools();
    expect(hub.status()[0]).toMatchObject({ name: "fs", state: "connected" });
    const read = toolNamed(tools, "fs__read_text_file");
    expect(read.risk).toBe("read");
    expect(read.owner).toBe("mcp:fs");
    expect(read.jsonSchema).toMatchObject({ type: "object", properties: { path: { type: "string" } } });
    expect(toolNamed(tools, "fs__write_file").risk).toBe("write");
  });

  it("reads and writes files in the allowed folder", async () => {
    const tools = hub.tools();
    const read = await toolNamed(tools, "fs__read_text_file").execute({ path: join(folder, "notes.txt") }, toolContext());
    // The server repeats the text as structured content; the model should see it once.
    expect(read).toEqual({ success: true, output: "buy milk\n" });
    const write = await toolNamed(tools, "fs__write_file").execute({ path: join(folder, "todo.txt"), content: "call Ana" }, toolContext());
    expect(write.success).toBe(true);
    expect(readFileSync(join(folder, "todo.txt"), "utf8")).toBe("call Ana");
    const listing = await toolNamed(tools, "fs__list_directory").execute({ path: folder }, toolContext());
    expect(listing.output).toContain("[FILE] notes.txt");
  });

  it("fails a read outside the allowed folder with the server's reason", async () => {
    const outside = await toolNamed(hub.tools(), "fs__read_text_file").execute({ path: "/etc/hostname" }, toolContext());
    expect(outside.success).toBe(false);
    expect(outside.error).toMatch(/access denied|outside allowed/i);
  });
});
