import { describe, expect, it } from "vitest";
import { TOOLS, useModelEmulator } from "./client-fixture.ts";
import {
  deepseekThinking,
  geminiAnswer,
  geminiParallelCalls,
  ollamaThinkInContent,
  signatureOf,
  tcpWrites,
  vllmCutShort,
  vllmMlxNoFinishReason,
  vllmOrphanThinkClose,
} from "../emulators/openai/recorded.ts";
import { ModelError, type ChatMessage } from "../../src/model/types.ts";
import { StreamAssembler } from "../../src/model/stream-assembler.ts";
import { completionChunkSchema } from "../../src/model/wire.ts";

const ASK: ChatMessage[] = [{ role: "user", content: "weather in Paris and London?" }];
const PARIS = { name: "shell", arguments: '{"command":"weather Paris"}' };
const LONDON = { name: "shell", arguments: '{"command":"weather London"}' };

const fixture = useModelEmulator({ toolProtocol: "native" });
const client = fixture.client;

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe("recorded streams", () => {
  it("are cut into many TCP writes, some inside an event separator or a character", () => {
    const writes = tcpWrites('data: {"content":"Grüße"}\n\n');
    expect(writes.length).toBeGreaterThan(1);
    expect(writes.some((w) => w[0] === 0x0a)).toBe(true);
    expect(Buffer.concat(writes).toString("utf8")).toBe('data: {"content":"Grüße"}\n\n');
  });
});

describe("parallel tool calls without an index (Gemini)", () => {
  it("keeps each call of the batch apart, with its own id and exact arguments", async () => {
    fixture.emulator.script(geminiParallelCalls([PARIS, LONDON]));
    const reply = await client().complete({ messages: ASK, tools: TOOLS });
    expect(reply.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
      ["shell", PARIS.arguments],
      ["shell", LONDON.arguments],
    ]);
    expect(new Set(reply.toolCalls.map((c) => c.id)).size).toBe(2);
    expect(reply.text).toBe("");
  });

  it("starts a new call at each complete call even when the calls carry no id", async () => {
    fixture.emulator.script(geminiParallelCalls([PARIS, LONDON], { withIds: false }));
    const reply = await client().complete({ messages: ASK, tools: TOOLS });
    expect(reply.toolCalls.map((c) => c.arguments)).toEqual([PARIS.arguments, LONDON.arguments]);
    expect(reply.toolCalls[0]!.id).not.toBe(reply.toolCalls[1]!.id);
  });
});

describe("the stream assembler", () => {
  const chunk = (toolCalls: object[]) => completionChunkSchema.parse({ choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: null }] });

  it("starts a new call when a server numbers every call 0 but gives each its own id", () => {
    const assembler = new StreamAssembler();
    assembler.push(chunk([{ index: 0, id: "a", function: { name: "shell", arguments: '{"command":' } }]));
    assembler.push(chunk([{ index: 0, function: { arguments: '"ls"}' } }]));
    assembler.push(chunk([{ index: 0, id: "b", function: { name: "current_time", arguments: "{}" } }]));
    expect(assembler.result().toolCalls).toEqual([
      { id: "a", name: "shell", arguments: '{"command":"ls"}' },
      { id: "b", name: "current_time", arguments: "{}" },
    ]);
  });

  it("joins the pieces of one call sent without an index", () => {
    const assembler = new StreamAssembler();
    assembler.push(chunk([{ id: "a", function: { name: "shell", arguments: "" } }]));
    assembler.push(chunk([{ function: { arguments: '{"command":' } }]));
    assembler.push(chunk([{ function: { arguments: '"ls"}' } }]));
    expect(assembler.result().toolCalls).toEqual([{ id: "a", name: "shell", arguments: '{"command":"ls"}' }]);
    expect(assembler.finished).toBe(false);
  });
});

describe("provider fields", () => {
  it("keeps Gemini's thought signature on the call it came with, and shows none of it", async () => {
    fixture.emulator.script(geminiParallelCalls([PARIS, LONDON], { signatures: true }));
    const deltas: string[] = [];
    const reply = await client().complete({ messages: ASK, tools: TOOLS, onTextDelta: (t) => deltas.push(t) });
    expect(reply.toolCalls[0]!.provider).toEqual({ extra_content: { google: { thought_signature: signatureOf(PARIS) } } });
    expect(reply.toolCalls[1]!.provider).toBeUndefined();
    expect(deltas.join("")).toBe("");
  });

  it("collects DeepSeek's streamed reasoning as one field, never as answer text", async () => {
    fixture.emulator.script(deepseekThinking("The user wants the weather. I should call the tool.", { call: PARIS }));
    const deltas: string[] = [];
    const reply = await client().complete({ messages: ASK, tools: TOOLS, onTextDelta: (t) => deltas.push(t) });
    expect(reply.provider).toEqual({ reasoning_content: "The user wants the weather. I should call the tool." });
    expect(reply.toolCalls).toEqual([{ id: "call_00_Ux5fGmd2pHCTMvs6XbO0lgRK", name: "shell", arguments: PARIS.arguments }]);
    expect(reply.text).toBe("");
    expect(deltas).toEqual([]);
  });

  it("sends provider fields back where they came from, and never the store's own key", async () => {
    fixture.emulator.script({ text: "ok" });
    const history: ChatMessage[] = [
      ...ASK,
      {
        role: "assistant", content: null, provider: { reasoning_content: "thinking" },
        tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: "{}" }, provider: { extra_content: { google: { thought_signature: "c2ln" } } } }],
      },
      { role: "tool", tool_call_id: "c1", content: "sunny" },
    ];
    await client().complete({ messages: history, tools: TOOLS });
    const sent = (fixture.emulator.requests[0]!.body.messages as Array<Record<string, unknown>>)[1]!;
    expect(sent).toEqual({
      role: "assistant", content: null, reasoning_content: "thinking",
      tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: "{}" }, extra_content: { google: { thought_signature: "c2ln" } } }],
    });
  });

  it("repairs a history without DeepSeek's reasoning once, instead of failing every later request", async () => {
    fixture.emulator.setProviderRules({ reasoningContent: true });
    fixture.emulator.script({ text: "still here" });
    const history: ChatMessage[] = [
      ...ASK,
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: '{"command":"weather"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "sunny" },
      { role: "assistant", content: "It is sunny." },
      { role: "user", content: "thanks" },
    ];
    const reply = await client().complete({ messages: history, tools: TOOLS });
    expect(reply.text).toBe("still here");
    expect(fixture.emulator.requests).toHaveLength(2);
    const retried = fixture.emulator.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    expect(retried.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(retried[1]!.content).toContain('[called shell {"command":"weather"}]');
    expect(retried[2]!.content).toContain("sunny");
  });

  it("stops sending provider fields to an endpoint that refuses unknown fields", async () => {
    fixture.emulator.setProviderRules({ noUnknownFields: true });
    fixture.emulator.script({ text: "first" }, { text: "second" });
    const history: ChatMessage[] = [
      ...ASK,
      { role: "assistant", content: null, provider: { reasoning_content: "x" }, tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "sunny" },
    ];
    const model = client();
    expect((await model.complete({ messages: history, tools: TOOLS })).text).toBe("first");
    expect((await model.complete({ messages: history, tools: TOOLS })).text).toBe("second");
    // One refusal, then the fields are left out for good.
    expect(fixture.emulator.requests).toHaveLength(3);
  });
});

describe("reasoning in the content", () => {
  it("cuts a <think> block from the answer and from the streamed text", async () => {
    fixture.emulator.script(ollamaThinkInContent("Okay, the user greets me. I should greet back.", "Hello! How can I help?"));
    const deltas: string[] = [];
    const reply = await client().complete({ messages: ASK, onTextDelta: (t) => deltas.push(t) });
    expect(reply.text).toBe("Hello! How can I help?");
    expect(deltas.join("")).toBe("Hello! How can I help?");
  });

  it("cuts the reasoning before a lone </think> when the template opened the block, and holds it back from then on", async () => {
    const model = client();
    fixture.emulator.script(vllmOrphanThinkClose("Let me think. Grüße means greetings.", "Greetings to you too."));
    fixture.emulator.script(vllmOrphanThinkClose("Second thoughts, hidden.", "Fine, thanks."));
    expect((await model.complete({ messages: ASK })).text).toBe("Greetings to you too.");
    const deltas: string[] = [];
    expect((await model.complete({ messages: ASK, onTextDelta: (t) => deltas.push(t) })).text).toBe("Fine, thanks.");
    expect(deltas.join("")).toBe("Fine, thanks.");
  });

  it("reads Gemini's CRLF-separated answer split across writes, multi-byte characters intact", async () => {
    fixture.emulator.script(geminiAnswer("Grüße aus Paris ☀️ — 18 °C."));
    expect((await client().complete({ messages: ASK })).text).toBe("Grüße aus Paris ☀️ — 18 °C.");
  });
});

describe("a stream that ends with [DONE] and no finish reason (vllm-mlx)", () => {
  it("is a whole answer, not a dropped connection", async () => {
    fixture.emulator.script(vllmMlxNoFinishReason({ text: "Hello, complete answer." }));
    const reply = await client({ maxRetries: 1 }).complete({ messages: ASK, onTextDelta: () => {} });
    expect(reply.text).toBe("Hello, complete answer.");
    expect(fixture.emulator.requests).toHaveLength(1);
  });

  it("returns its tool call", async () => {
    fixture.emulator.script(vllmMlxNoFinishReason({ call: PARIS }));
    const reply = await client({ maxRetries: 1 }).complete({ messages: ASK, tools: TOOLS });
    expect(reply.toolCalls.map((c) => [c.name, c.arguments])).toEqual([["shell", PARIS.arguments]]);
    expect(fixture.emulator.requests).toHaveLength(1);
  });
});

describe("a stream cut short", () => {
  it("is asked again when nothing of it was shown, and the half-received call is never returned", async () => {
    fixture.emulator.script(vllmCutShort({ call: PARIS }), geminiParallelCalls([PARIS]));
    const reply = await client({ maxRetries: 1 }).complete({ messages: ASK, tools: TOOLS, onTextDelta: () => {} });
    expect(reply.toolCalls.map((c) => c.arguments)).toEqual([PARIS.arguments]);
    expect(fixture.emulator.requests).toHaveLength(2);
  });

  it("says the connection dropped when retrying does not help", async () => {
    fixture.emulator.script(vllmCutShort({ call: PARIS }), vllmCutShort({ call: PARIS }));
    const error = await failure(client({ maxRetries: 1 }).complete({ messages: ASK, tools: TOOLS }));
    expect(error.kind).toBe("dropped");
    expect(error.message).toMatch(/^the model connection dropped before the answer was complete/);
  });

  it("is not asked again once part of the answer was shown, and says so", async () => {
    fixture.emulator.script(vllmCutShort({ text: "The weather in Paris is" }), { text: "never asked" });
    const deltas: string[] = [];
    const error = await failure(client({ maxRetries: 2 }).complete({ messages: ASK, onTextDelta: (t) => deltas.push(t) }));
    expect(error.kind).toBe("dropped");
    expect(error.message).toContain("the text shown so far is incomplete");
    expect(deltas.join("")).toBe("The weather in Paris is");
    expect(fixture.emulator.requests).toHaveLength(1);
  });

  it("counts a stream that ends cleanly without a finish reason as cut short", async () => {
    fixture.emulator.script({ sse: tcpWrites('data: {"choices":[{"index":0,"delta":{"content":"Half"},"finish_reason":null}]}\n\n') });
    const error = await failure(client().complete({ messages: ASK }));
    expect(error.kind).toBe("dropped");
  });

  it("asks again when a chunk mid-stream is not JSON, and says the stream was unreadable (not that the endpoint is wrong) when that persists", async () => {
    const good = 'data: {"choices":[{"index":0,"delta":{"content":"Half"},"finish_reason":null}]}\n\n';
    const broken = { sse: [good, 'data: {"choices":[{"index":0,"delta":{"content":"an\n\n', "data: [DONE]\n\n"] };
    fixture.emulator.script(broken, { text: "Whole answer." });
    expect((await client({ maxRetries: 1 }).complete({ messages: ASK })).text).toBe("Whole answer.");
    expect(fixture.emulator.requests).toHaveLength(2);

    fixture.emulator.script(broken, broken);
    const error = await failure(client({ maxRetries: 1 }).complete({ messages: ASK }));
    expect(error.kind).toBe("dropped");
    expect(error.message).toBe("the model endpoint sent an unreadable piece of its streamed answer (not a chat completion chunk) before the answer was complete and retrying did not help. Ask again in a moment.");
  });
});
