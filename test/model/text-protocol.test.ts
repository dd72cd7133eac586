import { describe, expect, it } from "vitest";
import { hideToolCallBlocks, parseTextToolCalls } from "../../src/model/text-protocol.ts";

function ids() {
  let n = 0;
  return () => `text_call_${++n}`;
}

describe("parsing text-protocol tool calls", () => {
  it("leaves an answer without blocks exactly as written", () => {
    expect(parseTextToolCalls("  Plain answer.\n", ids())).toEqual({ text: "  Plain answer.\n", toolCalls: [] });
  });

  it("keeps the text around blocks as the answer and numbers the calls", () => {
    const parsed = parseTextToolCalls(
      'First.\n<tool_call>{"name":"a","arguments":{"x":1}}</tool_call>\nMiddle.\n<tool_call>{"name":"b","arguments":{}}</tool_call>\nLast.',
      ids(),
    );
    expect(parsed.text).toBe("First.\n\nMiddle.\n\nLast.");
    expect(parsed.toolCalls).toEqual([
      { id: "text_call_1", name: "a", arguments: '{"x":1}' },
      { id: "text_call_2", name: "b", arguments: "{}" },
    ]);
  });

  it("reads a block the model left unclosed and one wrapped in a code fence", () => {
    const parsed = parseTextToolCalls('<tool_call>```json\n{"name":"a","arguments":{"q":"x"}}\n```</tool_call><tool_call>{"name":"b","arguments":{}}', ids());
    expect(parsed.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
      ["a", '{"q":"x"}'],
      ["b", "{}"],
    ]);
  });

  it("keeps arguments the model wrote as a JSON string", () => {
    const parsed = parseTextToolCalls('<tool_call>{"name":"a","arguments":"{\\"q\\":1}"}</tool_call>', ids());
    expect(parsed.toolCalls[0].arguments).toBe('{"q":1}');
  });

  it("still yields a call, with the broken arguments text, when the JSON is broken", () => {
    const parsed = parseTextToolCalls('<tool_call>{"name": "shell", "arguments": {"command": "ls",}}</tool_call>', ids());
    expect(parsed.toolCalls).toEqual([{ id: "text_call_1", name: "shell", arguments: '{"command": "ls",}' }]);
  });
});

describe("hiding tool-call blocks from streamed text", () => {
  it("shows only the text outside blocks, even when tags are split across deltas", () => {
    const shown: string[] = [];
    const filter = hideToolCallBlocks((t) => shown.push(t));
    const stream = 'Sure <b>now</b>.<tool_call>{"name":"a","arguments":{}}</tool_call> Done <tool';
    for (const ch of stream) filter.push(ch);
    filter.flush();
    expect(shown.join("")).toBe("Sure <b>now</b>. Done <tool");
  });

  it("drops an unclosed block at the end of the stream", () => {
    const shown: string[] = [];
    const filter = hideToolCallBlocks((t) => shown.push(t));
    filter.push("Checking. <tool_c");
    filter.push('all>{"name":"a"');
    filter.flush();
    expect(shown.join("")).toBe("Checking. ");
  });
});
