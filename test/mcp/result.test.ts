import { describe, expect, it } from "vitest";
import { toToolResult } from "../../src/tools/mcp/result.ts";

describe("MCP result conversion", () => {
  it("shows structured content that adds to the text as JSON", () => {
    const result = toToolResult({ content: [{ type: "text", text: "found 2" }], structuredContent: { ids: [4, 9] } });
    expect(result).toEqual({ success: true, output: 'found 2\n{\n  "ids": [\n    4,\n    9\n  ]\n}' });
  });

  it("does not repeat structured content the text already carries", () => {
    const asJson = toToolResult({ content: [{ type: "text", text: '{"ok":true}' }], structuredContent: { ok: true } });
    expect(asJson.output).toBe('{"ok":true}');
    const asText = toToolResult({ content: [{ type: "text", text: "Allowed directories:\n/tmp" }], structuredContent: { content: "Allowed directories:\n/tmp" } });
    expect(asText.output).toBe("Allowed directories:\n/tmp");
  });

  it("references embedded resources and audio without their bytes", () => {
    const result = toToolResult({
      content: [
        { type: "resource", resource: { uri: "file:///a.txt", text: "alpha" } },
        { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA" } },
        { type: "audio", data: "AAAAAA==", mimeType: "audio/wav" },
      ],
    });
    expect(result.output).toBe("[resource: file:///a.txt]\nalpha\n[resource: file:///b.bin]\n[audio: audio/wav, 4 bytes]");
  });

  it("makes an isError result a failure, with a message even when the server gave none", () => {
    expect(toToolResult({ isError: true, content: [] })).toEqual({
      success: false,
      output: "",
      error: "the tool reported an error without a message",
    });
  });

  it("reads results from servers on the oldest protocol", () => {
    expect(toToolResult({ toolResult: { rows: 3 } }).output).toBe('{\n  "rows": 3\n}');
  });
});
