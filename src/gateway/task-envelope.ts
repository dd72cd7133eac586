/**
 * The envelope of a turn nobody typed — a schedule's tick, an API call: a message from
 * `<kind>:<name>` in a session of its own in the conversation it delivers to, cards only where
 * `approvalsTo` names a place to ask (otherwise the non-interactive path denies, and says why).
 */
import { parseConversationRef } from "../config/schedules.ts";
import { parseEnvelope, type ChannelCapabilities, type IngressEnvelope, type ReplyTarget } from "../envelope.ts";

export interface TaskEnvelopeInput {
  kind: "schedule" | "api";
  name: string;
  /** The dedupe id: a tick's, or the API call's. */
  id: string;
  traceId: string;
  prompt: string;
  deliverTo: string;
  approvalsTo?: string;
  /** The thread part of the session key: a session of its own in the conversation. */
  sessionThread: string;
  capabilities: ChannelCapabilities;
}

const targetOf = (ref: string): ReplyTarget => {
  const c = parseConversationRef(ref);
  return { channel: c.channel, conversationId: c.conversationId, ...(c.threadId ? { threadId: c.threadId } : {}) };
};

export function taskEnvelope(input: TaskEnvelopeInput): IngressEnvelope {
  const replyTo = targetOf(input.deliverTo);
  return parseEnvelope({
    id: input.id,
    traceId: input.traceId,
    channel: replyTo.channel,
    conversation: { id: replyTo.conversationId, threadId: input.sessionThread, kind: "channel" },
    sender: { id: `${input.kind}:${input.name}`, name: `${input.kind} ${input.name}`, isBot: false },
    mentioned: true,
    text: input.prompt,
    replyTo,
    receivedAt: Date.now(),
    capabilities: { ...input.capabilities, inlineApproval: Boolean(input.approvalsTo) && input.capabilities.inlineApproval },
    origin: { kind: input.kind, name: input.name },
    ...(input.approvalsTo ? { approvalTarget: targetOf(input.approvalsTo) } : {}),
  });
}
