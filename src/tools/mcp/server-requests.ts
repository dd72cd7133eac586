/**
 * Requests an MCP server sends the bot while one of its tools runs: elicitation (a question for
 * the person) and, where configured, sampling (a model request). MCP does not say which call a
 * request belongs to (over stdio nothing on the wire ties them), so each is tied to the one call of
 * that server that is running; with none, or several that cannot be told apart, it is declined.
 * While the bot handles a request the call's idle clock is held: the server is waiting on the bot.
 */
import type { Logger } from "pino";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { requestError } from "./request-error.ts";
import type { ToolContext } from "../tool.ts";
import type { CallClock } from "./call-clock.ts";
import { answerElicitation, type ElicitationParams } from "./elicitation.ts";
import { answerSampling, type SamplingParams } from "./sampling.ts";

/** What a tool call brings from its turn: cancellation, progress, and what the server may ask of the turn. */
export type McpCallContext = Pick<ToolContext, "signal" | "onProgress" | "ask" | "authorize" | "complete" | "audit">;

/** A call of the server's tools that is running now. */
export interface RunningCall {
  tool: string;
  ctx: McpCallContext;
  clock: CallClock;
  /** Aborts when the call is over (answered, failed, timed out). */
  ended: AbortSignal;
}

/** The calls of one server that are running, to tie the server's requests to. */
export class RunningCalls {
  readonly #calls = new Set<RunningCall>();

  add(call: RunningCall): () => void {
    this.#calls.add(call);
    return () => this.#calls.delete(call);
  }

  /** The one running call, or undefined (and why) when there is none or more than one. */
  sole(): { call: RunningCall } | { reason: string } {
    if (this.#calls.size === 1) return { call: this.#calls.values().next().value! };
    return {
      reason: this.#calls.size === 0
        ? "no call of this server is running"
        : `${this.#calls.size} calls of this server are running, so the request cannot be tied to one person's request`,
    };
  }
}

export interface ServerRequestOptions {
  server: string;
  running: RunningCalls;
  /** Set when sampling is enabled for the server. */
  sampling?: { maxTokens: number };
  log: Logger;
}

/** The capabilities the bot declares to a server for these requests (besides `roots`). */
export function requestCapabilities(sampling: boolean): Record<string, object> {
  return { elicitation: { form: {} }, ...(sampling ? { sampling: {} } : {}) };
}

/** Installs the handlers on `client`, before it connects. */
export function handleServerRequests(client: Client, options: ServerRequestOptions): void {
  const { server, running, sampling, log } = options;
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const found = running.sole();
    if ("reason" in found || !found.call.ctx.ask || request.params.mode === "url") {
      log.warn({ reason: "reason" in found ? found.reason : "the call cannot ask anyone" }, "MCP elicitation declined");
      return { action: "decline" };
    }
    const { call } = found;
    const ask = call.ctx.ask!;
    const signal = AbortSignal.any([call.ctx.signal, call.ended, extra.signal]);
    const release = call.clock.hold();
    try {
      return await answerElicitation(server, request.params as ElicitationParams, (question) => ask(question, { signal }), log);
    } finally {
      release();
    }
  });
  if (sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      const found = running.sole();
      if ("reason" in found) {
        log.warn({ reason: found.reason }, "MCP sampling request refused");
        throw requestError(ErrorCode.InvalidRequest, `Gatehouse refused the sampling request: ${found.reason}`);
      }
      const { call } = found;
      const release = call.clock.hold();
      try {
        const signal = AbortSignal.any([call.ctx.signal, call.ended, extra.signal]);
        return await answerSampling(server, sampling, request.params as SamplingParams, call.ctx, signal, log);
      } finally {
        release();
      }
    });
  }
  // Requests the bot did not declare (sampling while it is off) get an error that says why.
  client.fallbackRequestHandler = async (request) => {
    const why =
      request.method === "sampling/createMessage"
        ? `sampling is off for MCP server ${server} in Gatehouse (mcp.servers.${server}.sampling.enabled)`
        : `Gatehouse does not handle ${request.method}`;
    log.warn({ method: request.method }, "MCP server request refused: not offered");
    throw requestError(ErrorCode.MethodNotFound, why);
  };
}
