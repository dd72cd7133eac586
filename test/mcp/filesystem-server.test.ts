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

// A 1×1 PNG, padded so its base64 would be easy to spot in the text.
const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex"), Buffer.alloc(9000, 1)]);

let folder: string;
let hub: McpHub;

beforeAll(async () => {
  folder = realpathSync(mkdtempSync(join(tmpdir(), "gatehouse-fs-")));
  writeFileSync(join(folder, "notes.txt"), "buy milk\n");
  writeFileSync(join(folder, "chart.png"), PNG);
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

  it("returns an image as a short reference, never its bytes, though the server repeats it as structured content", async () => {
    const media = await toolNamed(hub.tools(), "fs__read_media_file").execute({ path: join(folder, "chart.png") }, toolContext());
    expect(media).toEqual({ success: true, output: `[image: image/png, ${PNG.length} bytes]` });
    expect(media.output).not.toContain(PNG.toString("base64").slice(0, 40));
  });

  it("takes each tool's risk from its annotations where the config says nothing", () => {
    const tools = hub.tools();
    // Read-only and closed-world: runs without asking.
    expect(toolNamed(tools, "fs__read_media_file").risk).toBe("read");
    expect(toolNamed(tools, "fs__directory_tree").risk).toBe("read");
    // Destructive: asks first.
    expect(toolNamed(tools, "fs__move_file").risk).toBe("write");
    expect(toolNamed(tools, "fs__edit_file").risk).toBe("write");
  });
});
