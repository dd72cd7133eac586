/**
 * The Slack outbound port: threaded replies in mrkdwn, edits, approval cards and their
 * resolution, and the assistant thread status as the working indicator. One Web API call
 * per method; 429 and "too long" surface as the port's error types for the delivery queue.
 */
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { ReplyTarget } from "../../src/envelope.ts";
import type { OutboundPort, OutboundText, SentMessage } from "../../src/ports.ts";
import type { ApprovalCard, ApprovalResolution } from "../../src/approval/card.ts";
import { scrubSecrets } from "../../src/observe/scrub.ts";
import { LruMap } from "../../src/lru-map.ts";
import { escapeSlackText, markdownToMrkdwn } from "./mrkdwn.ts";
import { approvalCardBlocks, approvalFallbackText, resolvedCardBlocks } from "./card-blocks.ts";
import { toPortError } from "./errors.ts";

/**
 * Remembers the threads the bot has posted in, so follow-ups there count as addressed to it: the
 * `limit` most recently used; a forgotten thread is still known to the gateway's store.
 */
export class BotThreads {
  private readonly seen: LruMap<string, true>;
  constructor(limit = 10_000) {
    this.seen = new LruMap({ max: limit });
  }
  add(conversationId: string, threadTs: string): void {
    this.seen.set(`${conversationId}:${threadTs}`, true);
  }
  has(conversationId: string, threadTs: string): boolean {
    return this.seen.has(`${conversationId}:${threadTs}`);
  }
  get size(): number {
    return this.seen.size;
  }
}

export interface SlackPortDeps {
  client: WebClient;
  threads: BotThreads;
  log: Logger;
  workingStatus: string;
  /** Let Slack unfurl links in the bot's messages (default off: an unfurl fetches whatever URL the model wrote). */
  linkPreviews?: boolean;
}

function render(message: OutboundText): string {
  const clean = scrubSecrets(message.text);
  return message.plain ? escapeSlackText(clean) : markdownToMrkdwn(clean);
}

/** Creates the outbound port over a Web API client. */
export function createSlackPort(deps: SlackPortDeps): OutboundPort {
  const { client, threads, log } = deps;
  const unfurl = { unfurl_links: deps.linkPreviews === true, unfurl_media: deps.linkPreviews === true };

  const call = async <T>(method: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      const mapped = toPortError(err, method);
      log.warn({ method, err: mapped.message }, "slack call failed");
      throw mapped;
    }
  };

  const setStatus = async (target: ReplyTarget, status: string) => {
    if (!target.threadId) return;
    try {
      await client.assistant.threads.setStatus({ channel_id: target.conversationId, thread_ts: target.threadId, status });
    } catch (err) {
      // Only workspaces with the assistant feature have a thread status; elsewhere it is simply absent.
      log.debug({ err: toPortError(err, "assistant.threads.setStatus").message }, "thread status unavailable");
    }
  };

  return {
    async send(target, message): Promise<SentMessage> {
      const res = await call("chat.postMessage", () =>
        client.chat.postMessage({ channel: target.conversationId, thread_ts: target.threadId, text: render(message), ...unfurl }));
      threads.add(target.conversationId, target.threadId ?? res.ts!);
      return { id: res.ts! };
    },

    async edit(target, messageId, message) {
      await call("chat.update", () => client.chat.update({ channel: target.conversationId, ts: messageId, text: render(message) }));
    },

    async requestApproval(target, card: ApprovalCard): Promise<SentMessage> {
      const res = await call("chat.postMessage", () =>
        client.chat.postMessage({ channel: target.conversationId, thread_ts: target.threadId, text: approvalFallbackText(card), blocks: approvalCardBlocks(card), ...unfurl }));
      threads.add(target.conversationId, target.threadId ?? res.ts!);
      return { id: res.ts! };
    },

    async resolveApproval(target, messageId, card: ApprovalCard, resolution: ApprovalResolution) {
      await call("chat.update", () =>
        client.chat.update({ channel: target.conversationId, ts: messageId, text: escapeSlackText(resolution.text), blocks: resolvedCardBlocks(card, resolution) }));
    },

    typing: (target) => setStatus(target, deps.workingStatus),
    clearTyping: (target) => setStatus(target, ""),
  };
}
