import { describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../src/store/message-codec.ts";
import { flattenUnsignedToolTurns, mergeProviderFields, toWireMessages, withProviderFields } from "../../src/model/provider-fields.ts";
import type { ChatMessage } from "../../src/model/types.ts";

const SIGNED: ChatMessage = {
  role: "assistant", content: null, provider: { reasoning_content: "think" },
  tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" }, provider: { extra_content: { google: { thought_signature: "c2ln" } } } }],
};

describe("provider fields", () => {
  it("survive a round trip through a history row", () => {
    expect(decodeMessage(encodeMessage(SIGNED))).toEqual(SIGNED);
  });

  it("are absent from rows written before they existed, which still load", () => {
    const old = '{"v":1,"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":"{}"}}]}';
    expect(decodeMessage(old)).toEqual({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }] });
  });

  it("go onto the engine's tool-call message by call position", () => {
    const built: ChatMessage = { role: "assistant", content: null, tool_calls: [{ id: "renamed", type: "function", function: { name: "t", arguments: "{}" } }] };
    const reply = { text: "", finishReason: "tool_calls", provider: { reasoning_content: "think" }, toolCalls: [{ id: "c1", name: "t", arguments: "{}", provider: { extra_content: 1 } }] };
    expect(withProviderFields(built, reply)).toEqual({ ...built, provider: { reasoning_content: "think" }, tool_calls: [{ ...built.tool_calls![0]!, provider: { extra_content: 1 } }] });
  });

  it("join streamed reasoning and merge indexed details, replacing everything else", () => {
    let fields = mergeProviderFields(undefined, { reasoning_content: "The ", reasoning_details: [{ type: "reasoning.text", text: "a", index: 0 }] });
    fields = mergeProviderFields(fields, { reasoning_content: "user", reasoning_details: [{ type: "reasoning.text", text: "b", index: 0 }], extra_content: { google: { thought_signature: "x" } } });
    fields = mergeProviderFields(fields, { extra_content: { google: { thought_signature: "y" } } });
    expect(fields).toEqual({ reasoning_content: "The user", reasoning_details: [{ type: "reasoning.text", text: "ab", index: 0 }], extra_content: { google: { thought_signature: "y" } } });
  });

  it("are left off the wire on request, and the store's own key never goes out", () => {
    const [wire] = toWireMessages([SIGNED], false);
    expect(wire).toEqual({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }] });
  });

  it("missing from a tool exchange, turn it into text the model still reads", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "Looking.", tool_calls: [{ id: "a", type: "function", function: { name: "t", arguments: '{"x":1}' } }] },
      { role: "tool", tool_call_id: "a", content: "42" },
      SIGNED,
      { role: "tool", tool_call_id: "c1", content: "kept" },
    ];
    expect(flattenUnsignedToolTurns(history)).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: 'Looking.\n[called t {"x":1}]' },
      { role: "user", content: "[result of t]\n42" },
      SIGNED,
      { role: "tool", tool_call_id: "c1", content: "kept" },
    ]);
  });
});
