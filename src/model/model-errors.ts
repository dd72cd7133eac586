/**
 * Turns whatever went wrong during a model request (an `openai` SDK error, a malformed body,
 * a timer or a cancellation) into a ModelError whose message tells a person what to do.
 * No message carries the API key: server text is scrubbed and cut short.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  OpenAIError,
  PermissionDeniedError,
  RateLimitError,
} from "openai";
import { z } from "zod";
import { scrubSecrets } from "../observe/scrub.ts";
import { isContextLengthRefusal, refusedWindowTokens } from "./context-errors.ts";
import { ModelError } from "./types.ts";

/** What the caller knew when the request failed. */
export interface FailureContext {
  baseURL: string;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  /** The caller cancelled the request. */
  aborted: boolean;
  /** Our own stream-idle timer gave up waiting. */
  idleTimedOut: boolean;
}

/** Maps a failure to a ModelError; errors that are not about the model endpoint are rethrown as is. */
export function toModelError(error: unknown, ctx: FailureContext): ModelError {
  if (error instanceof ModelError) return error;
  if (ctx.aborted) return new ModelError("aborted", "the request to the model was cancelled");
  const seconds = Math.round(ctx.timeoutMs / 100) / 10;
  const timeout = new ModelError("timeout", `the model endpoint did not answer within ${seconds} s`);
  if (ctx.idleTimedOut || error instanceof APIConnectionTimeoutError) return timeout;
  if (error instanceof APIUserAbortError) return new ModelError("aborted", "the request to the model was cancelled");
  if (error instanceof APIConnectionError) {
    return new ModelError(
      "unreachable",
      `cannot reach the model endpoint at ${ctx.baseURL}; is the server running? set OPENAI_BASE_URL to the address of an OpenAI-compatible server (for example http://127.0.0.1:8000/v1)`,
    );
  }
  if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) {
    return new ModelError("auth", `the model endpoint at ${ctx.baseURL} refused the API key (${error.status}); check OPENAI_API_KEY`);
  }
  if (error instanceof RateLimitError) {
    // OpenAI's 429 for an account out of credit: waiting will not help, someone must see to billing.
    if (error.code === "insufficient_quota") {
      return new ModelError("auth", `the model endpoint at ${ctx.baseURL} says the account's quota is used up (429 insufficient_quota): ${serverText(error)}; check the plan and billing of the account OPENAI_API_KEY belongs to`);
    }
    return new ModelError("rate_limited", `the model endpoint is rate limiting requests (429; ${retries(ctx)}); try again in a moment`);
  }
  if (error instanceof APIError) {
    const said = serverText(error);
    if (isContextLengthRefusal(error)) {
      return new ModelError("context_length", `the conversation is too long for the model's context window (${said})`, { windowTokens: refusedWindowTokens(error) });
    }
    if (error.status === undefined) return new ModelError("server", `the model endpoint reported an error mid-answer: ${said}`);
    if (error.status >= 500) {
      return new ModelError("server", `the model endpoint failed with ${error.status} (${retries(ctx)}): ${said}`);
    }
    if (error.status === 404) {
      return new ModelError("server", `the model endpoint answered 404 for model "${ctx.model}": ${said}; check GATEHOUSE_MODEL and OPENAI_BASE_URL`);
    }
    return new ModelError("server", `the model endpoint rejected the request (${error.status}): ${said}`);
  }
  if (error instanceof SyntaxError || error instanceof z.ZodError || error instanceof OpenAIError) {
    return badResponse(ctx);
  }
  throw error;
}

/** The error for a 200 answer that is not a chat completion. */
export function badResponse(ctx: Pick<FailureContext, "baseURL">): ModelError {
  return new ModelError("bad_response", `the model endpoint at ${ctx.baseURL} sent something that is not a chat completion; is OPENAI_BASE_URL pointing at an OpenAI-compatible /v1 API?`);
}

/** True for a 400 saying the server cannot take the `tools` parameter (no native tool calling). */
export function isToolsUnsupported(error: unknown): boolean {
  if (!(error instanceof APIError) || error.status !== 400) return false;
  const aboutTools = /\b(tools?|tool_choice|functions?|function[ _]call(ing|s)?)\b/i.test(error.message);
  // Only "cannot take tools" counts; other 400s that mention tools (a bad tool message) must not switch protocols.
  const unsupported = /(not|n't|un)\s*support|not (enabled|available|allowed|permitted|implemented)|unrecogni[sz]ed|unknown (field|param|argument)|requires --|extra (fields|inputs)/i.test(error.message);
  return aboutTools && unsupported;
}

function retries(ctx: FailureContext): string {
  if (ctx.maxRetries === 0) return "not retried";
  return ctx.maxRetries === 1 ? "1 retry" : `${ctx.maxRetries} retries`;
}

function serverText(error: APIError): string {
  const text = readable(error.message.replace(/^\d{3}\s+/, ""));
  const short = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  return scrubSecrets(short);
}

/**
 * An HTML error page (from nginx, Cloudflare or another proxy in front of the model server) as a
 * line a person can read: its title or first heading, said to be a page rather than an API answer.
 */
function readable(text: string): string {
  if (!/<(?:!doctype|html|head|body|title|h1)\b/i.test(text)) return text;
  const heading = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1] ?? /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(text)?.[1];
  const words = (heading ?? text.replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, " "))
    .replace(/<[^>]*>/g, " ")
    .replace(/&nbsp;/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 120);
  return `${words || "an error page"} (an HTML page from something in front of the model server, such as a proxy)`;
}
