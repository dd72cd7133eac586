/**
 * The Slack outbound port: threaded replies in mrkdwn, edits, approval cards and their
 * resolution, permalinks, and the assistant thread status as the working indicator ("is running
 * shell…"). One Web API call per method; 429 and "too long" surface as the port's error types for
 * the delivery queue. Also the channel's pacing, as the delivery queues keep it.
 */
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { ReplyTarget } from "../../src/envelope.ts";
import { RateLimitedError, type DeliveryPacing, type OutboundPort, type OutboundText, type SentMessage } from "../../src/ports.ts";
import type { ApprovalCard, ApprovalResolution } from "../../src/approval/card.ts";
import { scrubSecrets } from "../../src/observe/scrub.ts";
import { LruMap } from "../../src/lru-map.ts";
import { escapeSlackText, markdownToMrkdwn } from "./mrkdwn.ts";
import { approvalCardBlocks, approvalFallbackText, resolvedCardBlocks } from "./card-blocks.ts";
import { SlackApiError, toPortError } from "./errors.ts";
import { answerPrivately, NOT_A_MEMBER, type CommandReplies } from "./command-replies.ts";
import { messageBlocks } from "./message-buttons.ts";

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

/**
 * Slack's limits as delivery keeps them: about one message a second per channel, across its threads,
 * and chat.update (Tier 3, about 50 a minute) per workspace for the live status messages. Nothing
 * else bot-wide.
 */
export const SLACK_PACING: DeliveryPacing = {
  minIntervalMs: 1000,
  sharedLimits: (target) => [{ key: `channel:${target.account ?? ""}:${target.conversationId}`, intervalMs: 1000 }],
  editLimits: (target) => [{ key: `chat.update:${target.account ?? ""}`, intervalMs: 1200 }],
};

/** Slack drops a thread status after two minutes without a message; the same status is set again after this. */
const STATUS_REFRESH_MS = 60_000;

export interface SlackPortDeps {
  client: WebClient;
  threads: BotThreads;
  log: Logger;
  workingStatus: string;
  /** Response URLs of recent slash commands: their answer's way out of conversations the bot is not in. */
  commandReplies?: CommandReplies;
  /** Let Slack unfurl links in the bot's messages (default off: an unfurl fetches whatever URL the model wrote). */
  linkPreviews?: boolean;
}

function render(message: OutboundText): string {
  const clean = scrubSecrets(message.text);
  return message.plain ? escapeSlackText(clean) : markdownToMrkdwn(clean);
}

/** The blocks of a message that carries buttons (`[]` too: an edit that removes them); nothing for plain text. */
function withButtons(message: OutboundText): { blocks?: ReturnType<typeof messageBlocks> } {
  return message.buttons ? { blocks: messageBlocks(render(message), message.buttons) } : {};
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

  // Per thread: the status it shows (Slack clears it when the bot posts there), whether one was set since
  // the last clear, and the calls in order (a clear never overtakes the status it clears).
  const statuses = new LruMap<string, { shown?: string; at: number; set: boolean; calls: Promise<void> }>({ max: 10_000 });
  const noStatus = new LruMap<string, true>({ max: 10_000 });
  const threadKey = (target: ReplyTarget) => `${target.conversationId}:${target.threadId ?? ""}`;
  const setStatus = (target: ReplyTarget, status: string): Promise<void> => {
    const key = threadKey(target);
    if (!target.threadId || noStatus.has(key)) return Promise.resolve();
    const thread = statuses.get(key) ?? { at: 0, set: false, calls: Promise.resolve() };
    statuses.set(key, thread);
    if (status === "" ? !thread.set : thread.shown === status && Date.now() - thread.at < STATUS_REFRESH_MS) return thread.calls;
    thread.shown = status || undefined;
    thread.at = Date.now();
    thread.set = status !== "";
    thread.calls = thread.calls.then(async () => {
      try {
        await client.assistant.threads.setStatus({ channel_id: target.conversationId, thread_ts: target.threadId!, status });
      } catch (err) {
        // Only assistant threads have a status; elsewhere it is simply absent, and not asked for again.
        const mapped = toPortError(err, "assistant.threads.setStatus");
        if (!(mapped instanceof RateLimitedError)) noStatus.set(key, true);
        thread.shown = undefined;
        log.debug({ err: mapped.message }, "thread status unavailable");
      }
    });
    return thread.calls;
  };
  const posted = (target: ReplyTarget, ts: string) => {
    threads.add(target.conversationId, target.threadId ?? ts);
    const thread = statuses.get(threadKey(target));
    if (thread) thread.shown = undefined;
  };

  return {
    async send(target, message): Promise<SentMessage> {
      let res: Awaited<ReturnType<typeof client.chat.postMessage>>;
      try {
        res = await call("chat.postMessage", () =>
          client.chat.postMessage({ channel: target.conversationId, thread_ts: target.threadId, text: render(message), ...withButtons(message), ...unfurl }));
      } catch (err) {
        // The answer to a slash command run where the bot is not a member goes back privately.
        const notMember = err instanceof SlackApiError && err.slackError !== undefined && NOT_A_MEMBER.has(err.slackError);
        const url = notMember && !target.threadId ? deps.commandReplies?.take(target.conversationId) : undefined;
        if (!url) throw err;
        await answerPrivately(url, render(message));
        return { id: `response_url:${Date.now()}` };
      }
      posted(target, res.ts!);
      return { id: res.ts! };
    },

    async edit(target, messageId, message) {
      await call("chat.update", () => client.chat.update({ channel: target.conversationId, ts: messageId, text: render(message), ...withButtons(message) }));
    },

    async requestApproval(target, card: ApprovalCard): Promise<SentMessage> {
      const res = await call("chat.postMessage", () =>
        client.chat.postMessage({ channel: target.conversationId, thread_ts: target.threadId, text: approvalFallbackText(card), blocks: approvalCardBlocks(card), ...unfurl }));
      posted(target, res.ts!);
      return { id: res.ts! };
    },

    async resolveApproval(target, messageId, card: ApprovalCard, resolution: ApprovalResolution) {
      await call("chat.update", () =>
        client.chat.update({ channel: target.conversationId, ts: messageId, text: escapeSlackText(resolution.text), blocks: resolvedCardBlocks(card, resolution) }));
    },

    async permalink(target, messageId) {
      const res = await call("chat.getPermalink", () => client.chat.getPermalink({ channel: target.conversationId, message_ts: messageId }));
      return res.permalink;
    },

    typing: (target, status) => setStatus(target, status ?? deps.workingStatus),
    clearTyping: (target) => setStatus(target, ""),
  };
}
