/**
 * Chat messages in the OpenAI Chat Completions shape (also what the store persists), and
 * the model client interface the engine calls.
 */

export interface ToolCallMessagePart {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string; name?: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCallMessagePart[] }
  | { role: "tool"; tool_call_id: string; content: string };

/** A tool as offered to the model. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A tool call exactly as the model produced it (arguments still a JSON string). */
export interface RawToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ModelRequest {
  messages: ChatMessage[];
  /** Tools to offer; empty or absent means a tool-less request. */
  tools?: ToolSpec[];
  signal?: AbortSignal;
  /** Called with each streamed piece of answer text. */
  onTextDelta?: (text: string) => void;
}

export interface ModelReply {
  /** The answer text, with any text-protocol tool calls removed. */
  text: string;
  toolCalls: RawToolCall[];
  finishReason: string | null;
}

export type ToolProtocol = "native" | "text" | "auto";

/** Talks to an OpenAI-compatible endpoint. Throws ModelError for failures a person should see. */
export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelReply>;
}

/** A model failure with a message fit for a person ("the model endpoint is unreachable at …"). */
export class ModelError extends Error {
  readonly kind: "unreachable" | "timeout" | "rate_limited" | "server" | "auth" | "bad_response" | "aborted";
  constructor(kind: ModelError["kind"], message: string) {
    super(message);
    this.name = "ModelError";
    this.kind = kind;
  }
}
