import { afterEach, describe, expect, it } from "vitest";
import { MemoryChannel, MEMORY_ROOM } from "../support/memory-channel.ts";
import { startTestBot, type TestBot } from "../support/bot.ts";
import { fileURLToPath } from "node:url";
import { FIXTURE_SERVER } from "./helpers.ts";
import type { Config } from "../../src/config/schema.ts";
import { McpConfigSchema } from "../../src/tools/mcp/schema.ts";
import { waitUntil } from "../support/wait.ts";

let fixture: TestBot | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

type Msg = { role: string; content: string | null; tool_calls?: unknown };
const messages = (fx: TestBot, i: number) => fx.model.requests[i]!.body.messages as Msg[];
const toolNames = (fx: TestBot, i: number) =>
  ((fx.model.requests[i]!.body.tools as Array<{ function: { name: string } }> | undefined) ?? []).map((t) => t.function.name);
const lastTool = (fx: TestBot, i: number) => messages(fx, i).filter((m) => m.role === "tool").at(-1)?.content ?? "";

async function mcpBot(mcp: Record<string, unknown>, configure?: (c: Config) => void) {
  const channel = new MemoryChannel({ capabilities: { inlineApproval: true } });
  fixture = await startTestBot({
    adapters: [channel],
    configure: (config) => {
      config.mcp = McpConfigSchema.parse({
        servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], timeoutMs: 5000 } },
        ...mcp,
      });
      configure?.(config);
    },
  });
  return { channel, fx: fixture };
}

describe("MCP tools in a full turn", () => {
  it("offers MCP tools to the model and runs a read-only one without asking", async () => {
    const { channel, fx } = await mcpBot({ servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnlyTools: ["echo"] } } });
    fx.model.script({ toolCalls: [{ name: "fx__echo", arguments: '{"text":"hello from mcp"}' }] }, { text: "echoed" });
    const env = await channel.say("echo something");
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, env.conversation.threadId).map((m) => m.text)).toContain("echoed"));
    expect(toolNames(fx, 0)).toEqual(expect.arrayContaining(["fx__echo", "fx__add"]));
    expect(lastTool(fx, 1)).toBe("hello from mcp");
    expect(channel.messagesIn(MEMORY_ROOM, env.conversation.threadId).map((m) => m.text).join("\n")).toMatch(/✅ fx__echo/);
  });

  it("answers though a server publishes a schema OpenAI refuses (array without items, draft-3 required)", async () => {
    const loose = fileURLToPath(new URL("./fixtures/loose-schema-server.ts", import.meta.url));
    const { channel, fx } = await mcpBot({ servers: { fx: { command: process.execPath, args: [loose], readOnly: true } } });
    fx.model.script({ toolCalls: [{ name: "fx__tag", arguments: '{"issue":7,"labels":["bug"]}' }] }, { text: "tagged it" });
    const env = await channel.say("tag issue 7 as a bug");
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, env.conversation.threadId).map((m) => m.text)).toContain("tagged it"));
    expect(lastTool(fx, 1)).toBe('tagged {"issue":7,"labels":["bug"]}');
    const offered = (fx.model.requests[0]!.body.tools as Array<{ function: { name: string; parameters: unknown } }>).find((t) => t.function.name === "fx__tag");
    expect(offered!.function.parameters).toEqual({
      type: "object",
      required: ["issue"],
      properties: {
        issue: { type: "integer" },
        labels: { type: "array", description: "labels to add", items: {} },
        matrix: { type: "array", items: { type: "array", items: {} } },
      },
    });
  });

  it("answers though a server lists more tools than a request may carry: the built-in tools and the first MCP tools up to the limit are offered", async () => {
    const many = fileURLToPath(new URL("./fixtures/many-tools-server.ts", import.meta.url));
    const { channel, fx } = await mcpBot({ servers: { fx: { command: process.execPath, args: [many], readOnly: true } } });
    fx.model.script({ toolCalls: [{ name: "fx__t5", arguments: "{}" }] }, { text: "t5 done" });
    const env = await channel.say("run t5");
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, env.conversation.threadId).map((m) => m.text)).toContain("t5 done"));
    const offered = toolNames(fx, 0);
    expect(offered).toHaveLength(128);
    expect(offered).toEqual(expect.arrayContaining(["current_time", "read_file", "fx__t0", "fx__t5"]));
    expect(offered).not.toContain("fx__t199");
    expect(lastTool(fx, 1)).toBe("t5 ran");
  });

  it("asks for approval before a prompt-required MCP tool runs", async () => {
    const { channel, fx } = await mcpBot({});
    fx.model.script({ toolCalls: [{ name: "fx__add", arguments: '{"a":2,"b":3}' }] }, { text: "the sum is in" });
    const env = await channel.say("add 2 and 3", { userId: "u-alice" });
    await waitUntil(() => expect(channel.openCards()).toHaveLength(1));
    expect(channel.openCards()[0]!.card!.tool).toBe("fx__add");
    await channel.click(channel.openCards()[0]!.card!.approvalId, "approve", "u-alice");
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, env.conversation.threadId).map((m) => m.text)).toContain("the sum is in"));
    expect(lastTool(fx, 1)).toMatch(/the sum is 5/);
  });

  it("in deferred mode offers only names and tool_search, then the activated tool from the next request", async () => {
    const { channel, fx } = await mcpBot({ deferred: true, servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnly: true } } });
    fx.model.script(
      { toolCalls: [{ name: "tool_search", arguments: '{"query":"add numbers sum"}' }] },
      { toolCalls: [{ name: "fx__add", arguments: '{"a":1,"b":1}' }] },
      { text: "two" },
    );
    const env = await channel.say("what is 1+1, use a tool");
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, env.conversation.threadId).map((m) => m.text)).toContain("two"));
    expect(toolNames(fx, 0)).toContain("tool_search");
    expect(toolNames(fx, 0)).not.toContain("fx__add");
    expect(messages(fx, 0)[0]!.content).toMatch(/More tools are available on request: .*fx__add/);
    expect(lastTool(fx, 1)).toMatch(/fx__add/);
    expect(toolNames(fx, 1)).toContain("fx__add");
    expect(lastTool(fx, 2)).toMatch(/the sum is 2/);
  });

  it("never lets tool_search return or activate a denied tool", async () => {
    const { channel, fx } = await mcpBot({ deferred: true }, (config) => {
      config.tools.deny = ["mcp:fx__add"];
    });
    fx.model.script(
      { toolCalls: [{ name: "tool_search", arguments: '{"query":"select:fx__add,fx__echo"}' }] },
      { toolCalls: [{ name: "fx__add", arguments: '{"a":1,"b":1}' }] },
      { text: "done" },
    );
    const env = await channel.say("add");
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, env.conversation.threadId).map((m) => m.text)).toContain("done"));
    expect(messages(fx, 0)[0]!.content).not.toMatch(/fx__add/);
    expect(lastTool(fx, 1)).not.toMatch(/Activated.*fx__add|fx__add:/);
    expect(toolNames(fx, 1)).not.toContain("fx__add");
    expect(lastTool(fx, 2)).toMatch(/refused by policy \(tools\.deny "mcp:fx__add"\)/);
  });

  it("offers a dynamic filter group's tools only when the message has one of its keywords", async () => {
    const { channel, fx } = await mcpBot({
      servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnly: true } },
      filterGroups: [
        { mode: "always", tools: ["mcp:fx__echo"] },
        { mode: "dynamic", tools: ["mcp:fx__add"], keywords: ["math"] },
      ],
    });
    fx.model.script({ toolCalls: [{ name: "fx__add", arguments: '{"a":1,"b":2}' }] }, { text: "first" }, { text: "second" });
    const first = await channel.say("please add these");
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, first.conversation.threadId).map((m) => m.text)).toContain("first"));
    expect(toolNames(fx, 0)).toContain("fx__echo");
    expect(toolNames(fx, 0)).not.toContain("fx__add");
    expect(lastTool(fx, 1)).toMatch(/fx__add was not run: refused by policy \(mcp\.filterGroups/);
    const second = await channel.say("some math please");
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, second.conversation.threadId).map((m) => m.text)).toContain("second"));
    expect(toolNames(fx, 2)).toEqual(expect.arrayContaining(["fx__echo", "fx__add"]));
  });

  it("keeps tools activated by tool_search for the session, across a restart, and forgets them on /new", async () => {
    const { channel, fx } = await mcpBot({ deferred: true, servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnly: true } } });
    fx.model.script({ toolCalls: [{ name: "tool_search", arguments: '{"query":"select:fx__add"}' }] }, { text: "activated" });
    const first = await channel.say("get the adder");
    const thread = first.conversation.threadId!;
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, thread).map((m) => m.text)).toContain("activated"));
    await fx.restart();
    fx.model.script({ text: "still here" }, { text: "fresh" });
    await channel.say("and now?", { threadId: thread, mentioned: true });
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, thread).map((m) => m.text)).toContain("still here"));
    expect(toolNames(fx, fx.model.requests.length - 1)).toContain("fx__add");
    await channel.say("/new", { threadId: thread, mentioned: true });
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, thread).map((m) => m.text).join("\n")).toMatch(/fresh conversation/));
    await channel.say("after new", { threadId: thread, mentioned: true });
    await waitUntil(() => expect(channel.messagesIn(MEMORY_ROOM, thread).map((m) => m.text)).toContain("fresh"));
    expect(toolNames(fx, fx.model.requests.length - 1)).not.toContain("fx__add");
  });
});
