import { describe, expect, it } from "vitest";
import { TOOLS, useModelEmulator } from "./client-fixture.ts";
import type { ChatMessage } from "../../src/model/types.ts";

const ASK: ChatMessage[] = [
  { role: "system", content: "You are Gatehouse." },
  { role: "user", content: "how full is the disk?" },
];

const fixture = useModelEmulator({ toolProtocol: "auto" });
const client = fixture.client;

describe("tool-call blocks in the text of a native reply (auto mode)", () => {
  for (const stream of [true, false]) {
    it(`runs a block naming an offered tool as a call and shows none of it (${stream ? "streamed" : "whole"})`, async () => {
      fixture.emulator.script({ text: 'Let me check.\n<tool_call>{"name": "shell", "arguments": {"command": "df -h"}}</tool_call>' });
      const deltas: string[] = [];
      const reply = await client({ stream }).complete({ messages: ASK, tools: TOOLS, onTextDelta: (t) => deltas.push(t) });
      expect(fixture.emulator.requests[0].body).toHaveProperty("tools");
      expect(reply.text).toBe("Let me check.");
      expect(reply.toolCalls).toEqual([{ id: expect.any(String), name: "shell", arguments: '{"command":"df -h"}' }]);
      expect(deltas.join("").trim()).toBe("Let me check.");
    });
  }

  it("hands a block naming a tool that was not offered to the engine instead of the person", async () => {
    fixture.emulator.script({ text: '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>' });
    const deltas: string[] = [];
    const reply = await client().complete({ messages: ASK, tools: TOOLS, onTextDelta: (t) => deltas.push(t) });
    expect(reply.text).toBe("");
    expect(reply.toolCalls.map((c) => [c.name, c.arguments])).toEqual([["delete_everything", "{}"]]);
    expect(deltas.join("")).toBe("");
  });

  it("hands a block with broken JSON to the engine with its broken arguments, and hides it", async () => {
    fixture.emulator.script({ text: 'Running it.\n<tool_call>{"name": "shell", "arguments": {"command": "ls}</tool_call>\nDone soon.' });
    const deltas: string[] = [];
    const reply = await client().complete({ messages: ASK, tools: TOOLS, onTextDelta: (t) => deltas.push(t) });
    expect(reply.text).toBe("Running it.\n\nDone soon.");
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls[0].name).toBe("shell");
    expect(() => JSON.parse(reply.toolCalls[0].arguments)).toThrow();
    expect(deltas.join("")).not.toContain("tool_call");
  });

  it("keeps several blocks in the order the model wrote them, with distinct ids", async () => {
    fixture.emulator.script({
      textToolCalls: [
        { name: "current_time", arguments: {} },
        { name: "shell", arguments: { command: "uptime" } },
      ],
    });
    const reply = await client().complete({ messages: ASK, tools: TOOLS });
    expect(reply.toolCalls.map((c) => c.name)).toEqual(["current_time", "shell"]);
    expect(new Set(reply.toolCalls.map((c) => c.id)).size).toBe(2);
    expect(reply.text).toBe("");
  });

  it("runs only the native calls when the text merely echoes them as blocks", async () => {
    fixture.emulator.script({
      text: 'Checking.<tool_call>{"name": "shell", "arguments": {"command": "uptime"}}</tool_call>',
      toolCalls: [{ id: "call_n", name: "shell", arguments: '{"command":"uptime"}' }],
    });
    const reply = await client().complete({ messages: ASK, tools: TOOLS });
    expect(reply.toolCalls).toEqual([{ id: "call_n", name: "shell", arguments: '{"command":"uptime"}' }]);
    expect(reply.text).toBe("Checking.");
  });

  it("leaves prose that only names the tag untouched", async () => {
    const prose = "Models that lack native tools write a <tool_call> tag followed by JSON.";
    fixture.emulator.script({ text: prose });
    const reply = await client().complete({ messages: ASK, tools: TOOLS });
    expect(reply).toEqual({ text: prose, toolCalls: [], finishReason: "stop" });
  });

  it("leaves the text as written in native mode", async () => {
    const raw = 'Let me check.\n<tool_call>{"name": "shell", "arguments": {"command": "df -h"}}</tool_call>';
    fixture.emulator.script({ text: raw });
    const deltas: string[] = [];
    const reply = await client({ toolProtocol: "native" }).complete({ messages: ASK, tools: TOOLS, onTextDelta: (t) => deltas.push(t) });
    expect(reply).toEqual({ text: raw, toolCalls: [], finishReason: "stop" });
    expect(deltas.join("")).toBe(raw);
  });
});
