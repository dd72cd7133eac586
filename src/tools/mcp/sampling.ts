/**
 * MCP sampling: a server asks the bot's model for a completion while one of its tools runs. Only for
 * servers configured with `sampling.enabled`. Each request passes the gate like a tool call of
 * `mcp__<server>__sampling` (exclusions, policy patterns, hooks, and the requester asked where a
 * person must approve), then runs as one tool-less request to the turn's model with `maxTokens`
 * capped by the config. The audit log records every request and its outcome, never the content.
 */
import type { Logger } from "pino";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { requestError } from "./request-error.ts";
import { scrubSecrets } from "../../observe/scrub.ts";
import type { ToolContext, ToolModelRequest } from "../tool.ts";
import { serverLabel } from "./elicitation.ts";

/** The part of a `sampling/createMessage` request read here. */
export interface SamplingParams {
  messages: Array<{ role: "user" | "assistant"; content: unknown }>;
  systemPrompt?: string;
  maxTokens: number;
  tools?: unknown[];
}

/** What goes back to the server (a type, not an interface: the SDK's result type has an index signature). */
export type SamplingResult = {
  model: string;
  role: "assistant";
  content: { type: "text"; text: string };
  stopReason?: "endTurn" | "maxTokens";
};

/** The parts of a running call's context sampling needs. */
export type SamplingContext = Pick<ToolContext, "authorize" | "complete" | "audit">;

/** The error code the MCP specification shows for a request the user rejected. */
const REJECTED = -1;
const SHOWN_MESSAGES = 3;
const SHOWN_CHARS = 160;

/** The name the policy reads for a server's sampling requests (its patterns: autoApprove, alwaysAsk, deny). */
export function samplingActionName(server: string): string {
  return `mcp__${server}__sampling`;
}

/** Answers one sampling request of `server`: gated, then one model request; throws (an error for the server) when it is refused or fails. */
export async function answerSampling(
  server: string,
  limit: { maxTokens: number },
  params: SamplingParams,
  ctx: SamplingContext,
  signal: AbortSignal,
  log: Logger,
): Promise<SamplingResult> {
  const name = samplingActionName(server);
  if (!ctx.authorize || !ctx.complete) {
    throw requestError(ErrorCode.InvalidRequest, "Gatehouse answers sampling requests only during a tool call it can tie to a person's request");
  }
  if (params.tools?.length) throw requestError(ErrorCode.InvalidParams, "Gatehouse does not offer tools in sampling requests");
  const messages: ToolModelRequest["messages"] = params.messages.map((m) => ({ role: m.role, content: textOf(m.content) }));
  const maxTokens = Math.min(params.maxTokens, limit.maxTokens);
  const inChars = messages.reduce((n, m) => n + m.content.length, params.systemPrompt?.length ?? 0);
  const sizes = `maxTokens ${maxTokens}${maxTokens < params.maxTokens ? ` (asked ${params.maxTokens})` : ""}; ${messages.length} messages, ${inChars} characters`;
  const record = (outcome: string, detail: string) => ctx.audit?.({ kind: "mcp.sampling", tool: name, source: `mcp:${server}`, outcome, detail });

  const verdict = await ctx.authorize(
    {
      name, owner: `mcp:${server}`, risk: "write", from: serverLabel(server),
      params: { maxTokens, systemPrompt: params.systemPrompt, messages },
      summary: summaryOf(server, params, messages, maxTokens),
    },
    { signal },
  );
  if (!verdict.allowed) {
    await record("refused", `${sizes}; ${verdict.reason}`);
    log.info({ tool: name, reason: verdict.reason }, "MCP sampling request refused");
    throw requestError(REJECTED, `the sampling request was refused: ${verdict.reason}`);
  }
  let reply;
  try {
    reply = await ctx.complete({ system: params.systemPrompt, messages, maxTokens, signal });
  } catch (err) {
    const reason = signal.aborted ? "the request was cancelled" : (err as Error).message;
    await record("failed", `${sizes}; ${reason}`);
    log.warn({ tool: name, err: reason }, "MCP sampling request failed");
    throw requestError(ErrorCode.InternalError, `the model request failed: ${reason}`);
  }
  const detail = `${sizes}; answered with ${reply.text.length} characters (${reply.stopped})`;
  await record("answered", detail);
  log.info({ tool: name, maxTokens, messages: messages.length, inChars, outChars: reply.text.length, stopped: reply.stopped }, "MCP sampling request answered");
  const stopReason = reply.stopped === "end" ? "endTurn" : reply.stopped === "max-tokens" ? "maxTokens" : undefined;
  return { model: reply.model, role: "assistant", content: { type: "text", text: reply.text }, ...(stopReason ? { stopReason } : {}) };
}

/** What the person approving reads: who asks, how much, and the start of each message (secret-scrubbed). */
function summaryOf(server: string, params: SamplingParams, messages: ToolModelRequest["messages"], maxTokens: number): string {
  const lines = [`${serverLabel(server)} asks to use the model for an answer of at most ${maxTokens} tokens, from ${messages.length} message${messages.length === 1 ? "" : "s"}:`];
  if (params.systemPrompt) lines.push(`- system: ${head(params.systemPrompt)}`);
  for (const m of messages.slice(-SHOWN_MESSAGES)) lines.push(`- ${m.role}: ${head(m.content)}`);
  if (messages.length > SHOWN_MESSAGES) lines.push(`(${messages.length - SHOWN_MESSAGES} earlier messages not shown)`);
  lines.push("The answer goes to the server.");
  return lines.join("\n");
}

function head(text: string): string {
  const line = scrubSecrets(text).replace(/\s+/g, " ").trim();
  return line.length > SHOWN_CHARS ? `"${line.slice(0, SHOWN_CHARS - 1)}…"` : `"${line}"`;
}

/** A message's content as text: text blocks as they are, other media named (the model is sent text only). */
function textOf(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((block) => {
      const b = (block ?? {}) as { type?: string; text?: unknown; mimeType?: unknown };
      if (b.type === "text" && typeof b.text === "string") return b.text;
      return `[${b.type ?? "unknown"}${typeof b.mimeType === "string" ? `: ${b.mimeType}` : ""} content not passed on]`;
    })
    .join("\n");
}
