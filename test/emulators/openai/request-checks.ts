/**
 * The request rules the real Chat Completions endpoint enforces and a client can break:
 * a missing model or messages, a tool result that answers no call, a call left unanswered,
 * a badly named tool. Returns the API's own error message, or null when the body is fine.
 */

/** A chat completions request body as received (only the fields the emulator looks at are typed). */
export interface ChatRequestBody {
  model?: unknown;
  messages?: unknown;
  tools?: unknown;
  stream?: unknown;
  [key: string]: unknown;
}

interface LooseMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: Array<{ id?: unknown; function?: { name?: unknown }; [key: string]: unknown }>;
  tool_call_id?: unknown;
  [key: string]: unknown;
}

/** What a real provider insists on beyond the OpenAI rules; each is off unless set. */
export interface ProviderRules {
  /** Gemini 3: the first tool call of each assistant step of the current turn carries its thought signature back. */
  thoughtSignatures?: boolean;
  /** DeepSeek thinking mode: every assistant tool-call message carries its `reasoning_content` back. */
  reasoningContent?: boolean;
  /** OpenAI: a message or tool call with a field the API does not define is refused. */
  noUnknownFields?: boolean;
}

const ASSISTANT_FIELDS = new Set(["role", "content", "tool_calls", "name", "refusal", "audio", "function_call"]);
const TOOL_CALL_FIELDS = new Set(["id", "type", "function"]);

/** Returns the provider's own 400 message for a body that breaks `rules`, or null. */
export function providerProblem(body: ChatRequestBody, rules: ProviderRules): string | null {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as LooseMessage[];
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === "user") lastUser = i;
  });
  for (const [i, m] of messages.entries()) {
    if (m.role !== "assistant") continue;
    const calls = m.tool_calls ?? [];
    if (rules.noUnknownFields) {
      const extra = Object.keys(m).find((k) => !ASSISTANT_FIELDS.has(k)) ?? calls.flatMap((c) => Object.keys(c)).find((k) => !TOOL_CALL_FIELDS.has(k));
      if (extra) return `Additional properties are not allowed ('${extra}' was unexpected) - 'messages.${i}'`;
    }
    if (!calls.length) continue;
    if (rules.reasoningContent && typeof m.reasoning_content !== "string") {
      return `Missing \`reasoning_content\` field in the assistant message at message index ${i}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`;
    }
    const signature = (calls[0]?.extra_content as { google?: { thought_signature?: unknown } } | undefined)?.google?.thought_signature;
    if (rules.thoughtSignatures && i > lastUser && typeof signature !== "string") {
      return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${String(calls[0]?.function?.name)}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
    }
  }
  return null;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Returns why the real API would answer 400 to this body, or null. */
export function requestProblem(body: ChatRequestBody): string | null {
  if (typeof body.model !== "string" || !body.model) return "you must provide a model parameter";
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.";
  }
  const messages = body.messages as LooseMessage[];
  let open = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!["system", "developer", "user", "assistant", "tool"].includes(String(m?.role))) {
      return `Invalid value: '${String(m?.role)}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.`;
    }
    if ("provider" in m) return `Invalid 'messages[${i}]': unknown parameter 'provider'.`;
    if (m.role === "tool") {
      if (!open.has(String(m.tool_call_id))) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
      open.delete(String(m.tool_call_id));
      continue;
    }
    if (open.size) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(", ")}`;
    }
    open = new Set((m.role === "assistant" ? (m.tool_calls ?? []) : []).map((c) => String(c.id)));
  }
  if (open.size) {
    return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(", ")}`;
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "Invalid type for 'tools': expected an array.";
    if (body.tools.length === 0) return "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.";
    if (body.tools.length > 128) return `Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length ${body.tools.length} instead.`;
    for (const [i, t] of (body.tools as Array<{ function?: { name?: unknown } }>).entries()) {
      const name = t?.function?.name;
      if (typeof name !== "string" || !TOOL_NAME.test(name)) {
        return `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
      }
      const parameters = (t.function as { parameters?: unknown }).parameters;
      if (parameters !== undefined) {
        const problem = schemaProblem(parameters);
        if (problem) return `Invalid schema for function '${name}': ${problem}`;
      }
    }
  }
  return null;
}

/**
 * Why OpenAI's endpoint refuses a function's parameters schema (code invalid_function_parameters),
 * for the faults MCP servers commonly publish; null when none of them is present.
 */
function schemaProblem(root: unknown): string | null {
  // An empty object is a function without parameters; any other root must be an object schema.
  const rootType = typeof root === "object" && root !== null ? (root as { type?: unknown }).type : null;
  if (rootType !== "object" && !(typeof root === "object" && root !== null && Object.keys(root).length === 0)) {
    return `schema must be a JSON Schema of 'type: "object"', got 'type: ${JSON.stringify((root as { type?: unknown } | null)?.type ?? null)}'.`;
  }
  const walk = (node: unknown, context: string[]): string | null => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return null;
    const schema = node as Record<string, unknown>;
    const where = `In context=(${context.map((c) => `'${c}'`).join(", ")}${context.length === 1 ? "," : ""})`;
    if ("required" in schema && !Array.isArray(schema.required)) return `${schema.required === true ? "True" : JSON.stringify(schema.required)} is not of type 'array'.`;
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.includes("array") && !("items" in schema)) return `${where}, array schema missing items.`;
    for (const key of ["properties", "$defs", "definitions"]) {
      const map = schema[key];
      if (typeof map !== "object" || map === null) continue;
      for (const [name, child] of Object.entries(map)) {
        const found = walk(child, [...context, key, name]);
        if (found) return found;
      }
    }
    for (const key of ["items", "additionalProperties"]) {
      const found = walk(schema[key], [...context, key]);
      if (found) return found;
    }
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      const list = schema[key];
      if (!Array.isArray(list)) continue;
      for (const [i, child] of list.entries()) {
        const found = walk(child, [...context, key, String(i)]);
        if (found) return found;
      }
    }
    return null;
  };
  return walk(root, []);
}
