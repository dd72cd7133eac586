import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { toToolResult } from "../../src/tools/mcp/result.ts";
import { registerSecret } from "../../src/observe/scrub.ts";
import { resultText } from "../../src/engine/record.ts";

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

  it("gives an isError result's text to the model once", () => {
    const result = toToolResult({ isError: true, content: [{ type: "text", text: "no such table: users" }] });
    expect(resultText(result)).toBe("Error: no such table: users");
  });

  it("never puts binary data from structured content into the text", () => {
    const png = Buffer.alloc(3000, 9).toString("base64");
    const result = toToolResult({
      content: [{ type: "text", text: "rendered" }],
      structuredContent: { chart: { type: "image", mimeType: "image/png", data: png }, file: { uri: "file:///a.bin", blob: "AAAA" }, rows: 3 },
    });
    expect(result.output).not.toContain(png.slice(0, 20));
    expect(result.output).not.toContain("AAAA");
    expect(JSON.parse(result.output.slice(result.output.indexOf("{")))).toEqual({
      chart: { type: "image", mimeType: "image/png", data: "[3000 bytes of image/png left out]" },
      file: { uri: "file:///a.bin", blob: "[3 bytes of binary data left out]" },
      rows: 3,
    });
  });

  it("drops structured content that only repeats the content blocks", () => {
    const block = { type: "image", data: Buffer.alloc(500).toString("base64"), mimeType: "image/jpeg" };
    expect(toToolResult({ content: [block], structuredContent: { content: [block] } }).output).toBe("[image: image/jpeg, 500 bytes]");
  });

  it("never hands the model a secret the bot holds (what a server was given to authenticate), and leaves other token-like text alone", () => {
    registerSecret("tok-SUPERSECRET-123");
    const failed = toToolResult({ isError: true, content: [{ type: "text", text: "login failed with env token tok-SUPERSECRET-123" }] });
    expect(failed).toEqual({ success: false, output: "", error: "login failed with env token [redacted]" });
    const listed = toToolResult({ content: [{ type: "text", text: "keys: sk-proj-abcdefghijklmnop1234, tok-SUPERSECRET-123" }] });
    expect(listed.output).toBe("keys: sk-proj-abcdefghijklmnop1234, [redacted]");
  });

  it("leaves out bytes in structured content under any key (a long run of base64 or hex), keeping ordinary text", () => {
    const raw = randomBytes(1000).toString("base64");
    const hex = randomBytes(5000).toString("hex");
    const prose = "The deploy of build 4711 finished without errors; ".repeat(20);
    const result = toToolResult({ structuredContent: { raw, nested: { bytes: hex, note: prose }, id: "a".repeat(600) } });
    expect(JSON.parse(result.output)).toEqual({
      raw: "[1000 bytes of base64-encoded data left out]",
      nested: { bytes: "[5000 bytes of hex-encoded data left out]", note: prose },
      id: "[300 bytes of hex-encoded data left out]",
    });
  });
});
