/**
 * Chat messages in the OpenAI Chat Completions shape (also what the store persists), and
 * the model client interface the engine calls.
 */

/**
 * Fields a provider sent beside the standard ones that it needs back, unread by Gatehouse:
 * DeepSeek's `reasoning_content` on a tool-call message, Gemini's `extra_content` (a thought
 * signature) on a tool call. Kept as received (field name → JSON value), sent back as received,
 * never shown to a person.
 */
export type ProviderFields = Record<string, unknown>;

export interface ToolCallMessagePart {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  /** Opaque fields the provider attached to this call (e.g. `extra_content`). */
  provider?: ProviderFields;
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string; name?: string }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: ToolCallMessagePart[];
      /** Opaque fields the provider attached to the message (e.g. `reasoning_content`). */
      provider?: ProviderFields;
    }
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
  /** Opaque fields the provider attached to this call, to be sent back with it. */
  provider?: ProviderFields;
}

export interface ModelRequest {
  messages: ChatMessage[];
  /** Tools to offer; empty or absent means a tool-less request. */
  tools?: ToolSpec[];
  signal?: AbortSignal;
  /** The most tokens the answer may take; unset: the endpoint's own limit. */
  maxTokens?: number;
  /** Called with each streamed piece of answer text. */
  onTextDelta?: (text: string) => void;
}

export interface ModelReply {
  /** The answer text, with any text-protocol tool calls removed. */
  text: string;
  toolCalls: RawToolCall[];
  finishReason: string | null;
  /**
   * Opaque fields the provider attached to the reply message (reasoning it needs back on a
   * tool-call turn); store them on the assistant message with `withProviderFields`.
   */
  provider?: ProviderFields;
}

export type ToolProtocol = "native" | "text" | "auto";

/** What is known of the model behind a client: its name and, when known, its context window. */
export interface ModelInfo {
  name: string;
  /** The window in tokens, as the endpoint reported it (`/v1/models`) or named it in a refusal. */
  contextTokens?: number;
}

/** Talks to an OpenAI-compatible endpoint. Throws ModelError for failures a person should see. */
export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelReply>;
  /** The model's name and window; absent on clients that know neither (test doubles). */
  describe?(): Promise<ModelInfo>;
}

/** A model failure with a message fit for a person ("the model endpoint is unreachable at …"). */
export class ModelError extends Error {
  readonly kind: "unreachable" | "timeout" | "rate_limited" | "server" | "auth" | "bad_response" | "aborted" | "dropped" | "context_length";
  /** For `context_length`: the window the endpoint named in its refusal, when it named one. */
  readonly windowTokens?: number;
  constructor(kind: ModelError["kind"], message: string, details: { windowTokens?: number } = {}) {
    super(message);
    this.name = "ModelError";
    this.kind = kind;
    this.windowTokens = details.windowTokens;
  }
}
