import { describe, expect, it } from "vitest";
import { TOOLS, useModelEmulator } from "./client-fixture.ts";
import type { ChatMessage } from "../../src/model/types.ts";

const ASK: ChatMessage[] = [
  { role: "system", content: "You are Gatehouse." },
  { role: "user", content: "what time is it?" },
];

const fixture = useModelEmulator({ toolProtocol: "native" });
const client = fixture.client;

describe("model client replies", () => {
  for (const stream of [true, false]) {
    it(`returns the model's text (${stream ? "streamed" : "whole"}) and shows it as it arrives`, async () => {
      fixture.emulator.script({ text: "It is a fine day to deploy." });
      const deltas: string[] = [];
      const reply = await client({ stream }).complete({ messages: ASK, onTextDelta: (t) => deltas.push(t) });
      expect(reply).toEqual({ text: "It is a fine day to deploy.", toolCalls: [], finishReason: "stop" });
      expect(deltas.join("")).toBe("It is a fine day to deploy.");
      if (stream) expect(deltas.length).toBeGreaterThan(1);
      expect(fixture.emulator.requests[0].body.stream ?? false).toBe(stream);
    });
  }

  it("reassembles a streamed tool call whose arguments arrive in several pieces", async () => {
    fixture.emulator.script({ toolCalls: [{ id: "call_a", name: "shell", arguments: '{"command": "ls -la /srv/app"}' }] });
    const reply = await client().complete({ messages: ASK, tools: TOOLS });
    expect(reply.toolCalls).toEqual([{ id: "call_a", name: "shell", arguments: '{"command": "ls -la /srv/app"}' }]);
    expect(reply.finishReason).toBe("tool_calls");
    const sent = fixture.emulator.requests[0].body;
    expect(sent.tools).toEqual(TOOLS.map((t) => ({ type: "function", function: t })));
  });

  it("keeps two parallel tool calls in the model's order, with the text beside them", async () => {
    fixture.emulator.script({
      text: "Checking both.",
      toolCalls: [
        { id: "call_1", name: "current_time", arguments: "{}" },
        { id: "call_2", name: "shell", arguments: '{"command":"uptime"}' },
      ],
    });
    const reply = await client().complete({ messages: ASK, tools: TOOLS });
    expect(reply.text).toBe("Checking both.");
    expect(reply.toolCalls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ["call_1", "current_time", "{}"],
      ["call_2", "shell", '{"command":"uptime"}'],
    ]);
  });

  it("passes malformed tool arguments through untouched for the engine to report", async () => {
    fixture.emulator.script({ toolCalls: [{ id: "call_x", name: "shell", arguments: '{"command": "ls' }] });
    const reply = await client().complete({ messages: ASK, tools: TOOLS });
    expect(reply.toolCalls).toEqual([{ id: "call_x", name: "shell", arguments: '{"command": "ls' }]);
  });

  it("sends no tools parameter when no tools are offered", async () => {
    fixture.emulator.script({ text: "ok" });
    await client().complete({ messages: ASK, tools: [] });
    expect(fixture.emulator.requests[0].body).not.toHaveProperty("tools");
  });

  it("returns an empty reply when the model says nothing", async () => {
    fixture.emulator.script({ empty: true }, { empty: true });
    expect(await client().complete({ messages: ASK })).toEqual({ text: "", toolCalls: [], finishReason: "stop" });
    expect(await client({ stream: false }).complete({ messages: ASK })).toEqual({ text: "", toolCalls: [], finishReason: "stop" });
  });

  it("sends the API key as a bearer token", async () => {
    fixture.emulator.script({ text: "ok" });
    await client({ apiKey: "sk-test-abcdefghijklmnop" }).complete({ messages: ASK });
    expect(fixture.emulator.requests[0].headers.authorization).toBe("Bearer sk-test-abcdefghijklmnop");
  });
});

describe("text tool protocol", () => {
  it("describes the tools in a system message instead of sending tools, and parses the calls back", async () => {
    fixture.emulator.script({
      text: "Let me look.",
      textToolCalls: [
        { name: "current_time", arguments: {} },
        { name: "shell", arguments: { command: "df -h" } },
      ],
    });
    const deltas: string[] = [];
    const reply = await client({ toolProtocol: "text" }).complete({ messages: ASK, tools: TOOLS, onTextDelta: (t) => deltas.push(t) });

    const sent = fixture.emulator.requests[0].body;
    expect(sent).not.toHaveProperty("tools");
    const messages = sent.messages as ChatMessage[];
    expect(messages[0]).toEqual(ASK[0]);
    expect(messages[1].role).toBe("system");
    expect(messages[1].content).toContain('<tool_call>{"name": "<tool name>", "arguments": {');
    expect(messages[1].content).toContain("### shell");
    expect(messages[1].content).toContain('"required":["command"]');

    expect(reply.text).toBe("Let me look.");
    expect(reply.toolCalls).toEqual([
      { id: "text_call_1", name: "current_time", arguments: "{}" },
      { id: "text_call_2", name: "shell", arguments: '{"command":"df -h"}' },
    ]);
    expect(deltas.join("")).not.toContain("tool_call");
  });

  it("rewrites tool calls and results in the history as text the model can read", async () => {
    fixture.emulator.script({ text: "It is noon." });
    const history: ChatMessage[] = [
      ...ASK,
      { role: "assistant", content: null, tool_calls: [{ id: "text_call_1", type: "function", function: { name: "current_time", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "text_call_1", content: "12:00" },
    ];
    const reply = await client({ toolProtocol: "text" }).complete({ messages: history, tools: TOOLS });
    expect(reply.text).toBe("It is noon.");
    const sent = fixture.emulator.requests[0].body.messages as ChatMessage[];
    expect(sent.slice(-2)).toEqual([
      { role: "assistant", content: '<tool_call>{"name":"current_time","arguments":{}}</tool_call>' },
      { role: "user", content: '<tool_result name="current_time" id="text_call_1">12:00</tool_result>' },
    ]);
  });

  it("turns a block with broken JSON into a call carrying the broken arguments", async () => {
    fixture.emulator.script({ text: 'Running it.\n<tool_call>{"name": "shell", "arguments": {"command": "ls}</tool_call>' });
    const reply = await client({ toolProtocol: "text" }).complete({ messages: ASK, tools: TOOLS });
    expect(reply.text).toBe("Running it.");
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls[0].name).toBe("shell");
    expect(() => JSON.parse(reply.toolCalls[0].arguments)).toThrow();
    expect(reply.toolCalls[0].arguments).toContain('"command": "ls');
  });

  it("falls back to the text protocol in auto mode when the server says it cannot take tools", async () => {
    fixture.emulator.script(
      { status: 400, message: "registry.ollama.ai/library/gemma:2b does not support tools" },
      { textToolCalls: [{ name: "current_time", arguments: {} }] },
      { text: "second turn" },
    );
    const model = client({ toolProtocol: "auto" });
    const reply = await model.complete({ messages: ASK, tools: TOOLS });
    expect(reply.toolCalls.map((c) => c.name)).toEqual(["current_time"]);
    expect(fixture.emulator.requests[0].body).toHaveProperty("tools");
    expect(fixture.emulator.requests[1].body).not.toHaveProperty("tools");

    await model.complete({ messages: ASK, tools: TOOLS });
    expect(fixture.emulator.requests).toHaveLength(3);
    expect(fixture.emulator.requests[2].body).not.toHaveProperty("tools");
  });
});
