import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { demoModel } from "../emulators/openai/demo-model.ts";
import { createModelClient } from "../../src/model/openai-client.ts";
import { createDemoModelClient } from "../../src/model/demo-model.ts";
import type { ChatMessage, ToolProtocol, ToolSpec } from "../../src/model/types.ts";
import { silentLogger } from "../../src/observe/logger.ts";

const TOOLS: ToolSpec[] = [
  { name: "current_time", description: "The current time.", parameters: { type: "object", properties: {} } },
  { name: "shell", description: "Runs a command.", parameters: { type: "object", properties: { command: { type: "string" } } } },
];

let emulator: OpenAIEmulator;
beforeEach(async () => {
  emulator = await startOpenAIEmulator();
  emulator.setFallback(demoModel);
});
afterEach(async () => {
  await emulator.close();
});

function client(toolProtocol: ToolProtocol) {
  return createModelClient({ baseURL: emulator.baseURL, model: "demo", toolProtocol, timeoutMs: 2_000, maxRetries: 0, log: silentLogger() });
}

describe("the demo model behind `serve.ts`", () => {
  for (const protocol of ["native", "text"] as const) {
    it(`asks for the time, then quotes the tool's result (${protocol} tools)`, async () => {
      const model = client(protocol);
      const history: ChatMessage[] = [{ role: "user", content: "what time is it?" }];
      const first = await model.complete({ messages: history, tools: TOOLS });
      expect(first.toolCalls.map((c) => c.name)).toEqual(["current_time"]);

      const id = first.toolCalls[0].id;
      history.push(
        { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "current_time", arguments: first.toolCalls[0].arguments } }] },
        { role: "tool", tool_call_id: id, content: "2030-01-01T12:00:00Z" },
      );
      const second = await model.complete({ messages: history, tools: TOOLS });
      expect(second.toolCalls).toEqual([]);
      expect(second.text).toContain("2030-01-01T12:00:00Z");
    });
  }

  it("runs the rest of the message as a shell command", async () => {
    const reply = await client("native").complete({ messages: [{ role: "user", content: "please run ls -la /tmp" }], tools: TOOLS });
    expect(reply.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([["shell", { command: "ls -la /tmp" }]]);
  });

  it("echoes when no tool fits or none is offered", async () => {
    const reply = await client("native").complete({ messages: [{ role: "user", content: "what time is it?" }] });
    expect(reply).toMatchObject({ text: "echo: what time is it?", toolCalls: [] });
  });
});

describe("the demo model inside the process (npm start with no endpoint)", () => {
  it("greets, asks for the time, and quotes the tool's result", async () => {
    const model = createDemoModelClient();
    const hello = await model.complete({ messages: [{ role: "user", content: "hello" }], tools: TOOLS });
    expect(hello).toMatchObject({ toolCalls: [], finishReason: "stop", text: expect.stringContaining("built-in demo model") });

    const history: ChatMessage[] = [{ role: "user", content: "what time is it?" }];
    const first = await model.complete({ messages: history, tools: TOOLS });
    expect(first).toMatchObject({ finishReason: "tool_calls", toolCalls: [{ name: "current_time", arguments: "{}" }] });
    const id = first.toolCalls[0]!.id;
    history.push(
      { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "current_time", arguments: "{}" } }] },
      { role: "tool", tool_call_id: id, content: "2030-01-01T12:00:00Z" },
    );
    expect((await model.complete({ messages: history, tools: TOOLS })).text).toContain("2030-01-01T12:00:00Z");
  });

  it("runs a shell command only when shell is offered", async () => {
    const model = createDemoModelClient();
    const offered = await model.complete({ messages: [{ role: "user", content: "run ls" }], tools: TOOLS });
    expect(offered.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([["shell", { command: "ls" }]]);
    const refused = await model.complete({ messages: [{ role: "user", content: "run ls" }], tools: TOOLS.filter((t) => t.name !== "shell") });
    expect(refused).toMatchObject({ text: "echo: run ls", toolCalls: [] });
  });
});
