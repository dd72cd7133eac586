/**
 * How a chat message is written to and read from a history row. Every row carries a format
 * version `v` beside the message's own fields, so rows written by an older Gatehouse keep
 * loading after the message shape changes: add a decoder for the new version, keep the old one.
 */
import { z } from "zod";
import type { ChatMessage } from "../model/types.ts";

/** The format version new rows are written with. */
export const MESSAGE_FORMAT_VERSION = 1;

/**
 * Provider fields (reasoning, thought signatures) kept as the provider sent them. Optional, so rows
 * written before they existed read as they did, and a Gatehouse that predates them drops them.
 */
const ProviderFieldsV1 = z.record(z.string(), z.unknown()).optional();

const ToolCallV1 = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
  provider: ProviderFieldsV1,
});

/** A chat message as stored (format version 1); also used by the turn records. */
export const MessageV1 = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string(), name: z.string().optional() }),
  z.object({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(ToolCallV1).optional(),
    provider: ProviderFieldsV1,
  }),
  z.object({ role: z.literal("tool"), tool_call_id: z.string(), content: z.string() }),
]);

const Versioned = z.object({ v: z.number().int().positive() });

/** Serializes a message for a history row. */
export function encodeMessage(message: ChatMessage): string {
  return JSON.stringify({ v: MESSAGE_FORMAT_VERSION, ...message });
}

/** Reads a history row back into a message; throws naming the problem when the row cannot be read. */
export function decodeMessage(body: string): ChatMessage {
  const raw: unknown = JSON.parse(body);
  const { v } = Versioned.parse(raw);
  if (v === 1) return MessageV1.parse(raw);
  throw new Error(
    `A stored message has format version ${v}, newer than this Gatehouse understands (${MESSAGE_FORMAT_VERSION}). Upgrade Gatehouse.`,
  );
}
