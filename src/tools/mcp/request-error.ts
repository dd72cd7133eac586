/**
 * The error the bot answers a server's request with. The SDK sends a thrown error's `code` and
 * `message` as they are; an McpError's message already starts with "MCP error <code>:", which the
 * server's side would then show twice.
 */

/** An error that reaches the server as `{ code, message }`. */
export function requestError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}
