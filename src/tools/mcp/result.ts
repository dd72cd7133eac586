/**
 * Turns an MCP `tools/call` result into the text a Gatehouse tool result carries: text blocks
 * as they are, structured content as JSON (unless it only repeats the content blocks or a text
 * block already says the same), and binary content as short references the model can read
 * without the bytes. Binary data (`data`, `blob`, or a long run of base64 or hex under any key)
 * never goes into the text, wherever it sits: an image inside structured content would otherwise
 * send its base64 to the model on every call.
 */
import { withoutRegisteredSecrets } from "../../observe/scrub.ts";
import type { ToolResult } from "../tool.ts";

/** The parts of an MCP call result this converter reads (a loose view of the SDK's type). */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  /** Results from servers on the 2024-10-07 protocol. */
  toolResult?: unknown;
}

interface ContentBlock {
  type?: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

/** Converts one MCP call result to a ToolResult; `isError` results become failures. */
export function toToolResult(result: McpCallResult): ToolResult {
  const parts: string[] = [];
  const blocks = (result.content ?? []) as ContentBlock[];
  for (const block of blocks) parts.push(describeBlock(block));
  const structured = result.structuredContent;
  if (structured !== undefined && !mirrorsBlocks(structured, blocks) && !alreadyInText(structured, blocks)) {
    parts.push(JSON.stringify(withoutBinary(structured), null, 2));
  }
  if (result.toolResult !== undefined && blocks.length === 0) parts.push(stringify(withoutBinary(result.toolResult)));
  // A server that echoes what it was given to authenticate (an env value, a header) does not hand it to the model.
  const text = withoutRegisteredSecrets(parts.filter((p) => p.length > 0).join("\n"));
  // The message is the error; repeating it as output would show it twice ("Error: X\nX").
  if (result.isError) return { success: false, output: "", error: text || "the tool reported an error without a message" };
  return { success: true, output: text };
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text ?? "";
    case "image":
    case "audio":
      return `[${block.type}: ${block.mimeType ?? "unknown type"}, ${base64Bytes(block.data ?? "")} bytes]`;
    case "resource_link":
      return `[resource: ${block.uri ?? "?"}]`;
    case "resource": {
      const r = block.resource ?? {};
      const ref = `[resource: ${r.uri ?? "?"}]`;
      return typeof r.text === "string" ? `${ref}\n${r.text}` : ref;
    }
    default:
      return `[${block.type ?? "unknown"} content]`;
  }
}

/** True when the structured content only holds the content blocks again (server-filesystem's `{ content: [...] }`). */
function mirrorsBlocks(structured: unknown, blocks: ContentBlock[]): boolean {
  if (blocks.length === 0) return false;
  const wanted = JSON.stringify(blocks);
  if (JSON.stringify(structured) === wanted) return true;
  return typeof structured === "object" && structured !== null && Object.values(structured).some((v) => JSON.stringify(v) === wanted);
}

const BASE64 = /^[A-Za-z0-9+/=\s_-]+$/;

/**
 * A copy with binary payloads replaced by a note of their size: every `blob`, and a `data` that
 * belongs to an image or audio (or looks like a long base64 run).
 */
/** From this length a string of base64 or hex characters is taken for encoded bytes, whatever its key. */
const LONG_ENCODED = 512;
const HEX = /^[0-9a-fA-F]+$/;
/** Base64 without line breaks or spaces (text with spaces is never taken for bytes). */
const BASE64_RUN = /^[A-Za-z0-9+/=_-]+$/;

function withoutBinary(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutBinary);
  if (value === null || typeof value !== "object") return value;
  const object = value as Record<string, unknown>;
  const mimeType = typeof object.mimeType === "string" ? object.mimeType : undefined;
  const media = object.type === "image" || object.type === "audio" || mimeType !== undefined;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(object)) {
    const binary = typeof v === "string" && (key === "blob" || (key === "data" && (media || (v.length >= 128 && BASE64.test(v)))));
    if (binary) out[key] = `[${base64Bytes(v as string)} bytes of ${mimeType ?? "binary data"} left out]`;
    // Bytes under any other name: a long run of base64 or hex is no text a model reads.
    else if (typeof v === "string" && v.length >= LONG_ENCODED && (HEX.test(v) || (BASE64_RUN.test(v) && /[A-Z]/.test(v) && /[a-z]/.test(v)))) {
      out[key] = HEX.test(v) ? `[${Math.floor(v.length / 2)} bytes of hex-encoded data left out]` : `[${base64Bytes(v)} bytes of base64-encoded data left out]`;
    } else out[key] = withoutBinary(v);
  }
  return out;
}

/** Size of the decoded bytes, without decoding them. */
function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/**
 * Servers are asked to repeat structured content as text; do not show it twice. It counts as
 * repeated when a text block holds the same JSON, or when every leaf is a string the text
 * already contains (e.g. `{ content: "<the text>" }`).
 */
function alreadyInText(structured: unknown, blocks: ContentBlock[]): boolean {
  const texts = blocks.filter((b) => b.type === "text" && typeof b.text === "string").map((b) => b.text as string);
  const wanted = JSON.stringify(structured);
  const sameJson = texts.some((text) => {
    try {
      return JSON.stringify(JSON.parse(text)) === wanted;
    } catch {
      return false;
    }
  });
  if (sameJson) return true;
  const leaves = leafValues(structured);
  const joined = texts.join("\n");
  return leaves.length > 0 && leaves.every((leaf) => typeof leaf === "string" && joined.includes(leaf));
}

function leafValues(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(leafValues);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(leafValues);
  return [value];
}

function stringify(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}
