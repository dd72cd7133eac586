/**
 * The Telegram channel adapter (grammY): checks the token, registers the bot's commands, receives
 * updates by long polling (default) or webhook, feeds the gateway's sink in per-chat order, answers
 * approval clicks, and exposes the outbound port.
 */
import { Api, GrammyError, HttpError } from "grammy";
import type { Logger } from "pino";
import { decodeButtonPayload, parseBotCommand, type ApprovalClickOutcome, type ChannelCapabilities, type IngressEnvelope } from "../../src/envelope.ts";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import type { ChannelAdapter, HttpRoutes, InboundSink } from "../../src/ports.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { LruMap } from "../../src/lru-map.ts";
import { registerSecret, scrubSecrets } from "../../src/observe/scrub.ts";
import { classifyUpdate, displayName, parseUpdate, type TelegramCallbackQuery } from "./inbound.ts";
import { createTelegramPort } from "./outbound.ts";
import { handleButtonQuery } from "./message-buttons.ts";
import { createTelegramApproverGroups } from "./approver-groups.ts";
import { UpdatePoller, type OffsetStore } from "./polling.ts";
import { ReasonReplies, type PromptStore } from "./reason-replies.ts";
import { startWebhookServer, type WebhookServer } from "./webhook.ts";
import { createBotApiFetch } from "./bot-api-fetch.ts";

export type { OffsetStore } from "./polling.ts";
export type { PromptStore } from "./reason-replies.ts";

export interface TelegramAdapterOptions {
  /** TELEGRAM_BOT_TOKEN. */
  token: string;
  /** TELEGRAM_API_ROOT: the Bot API root, without a trailing slash (default https://api.telegram.org). */
  apiRoot?: string;
  log?: Logger;
  /** For multi-bot setups: carried in envelopes and reply targets. */
  account?: string;
  /** Where the polling offset watermark is kept across restarts. */
  offsetStore?: OffsetStore;
  /** Where "Deny with reason…" prompts are kept, so that a reply after a restart still decides. */
  promptStore?: PromptStore;
  /** How long a kept prompt is kept before it is deleted from `promptStore` (default 7 days). */
  keepPromptsMs?: number;
  /** Webhook mode (TELEGRAM_WEBHOOK_URL, TELEGRAM_WEBHOOK_SECRET); long polling when absent. */
  webhook?: {
    url: string;
    secret: string;
    /**
     * Where the receiver listens (default 0.0.0.0:8080), or the shared HTTP server (`routes`) it is
     * mounted on; the path is taken from `url`.
     */
    listen?: { host?: string; port?: number; routes?: HttpRoutes };
  };
  /** Long-poll timeout in seconds (default 25). */
  pollTimeoutSeconds?: number;
  /** Pause after a failed poll (default 1000 ms). */
  retryDelayMs?: number;
  /** In the `lines` progress style: keep one progress message per request and edit it as lines come in (default false). */
  editProgressInPlace?: boolean;
  /** How long a click waits for the gateway before the query is answered anyway (default 5000 ms). */
  clickAnswerTimeoutMs?: number;
  /**
   * Group messages must address the bot (mention, reply, command, or a forum topic it posted in) to
   * reach the gateway (default true). False forwards every group message with `mentioned: false`.
   */
  mentionGate?: boolean;
}

/** Whether the adapter is receiving updates; `detail` says why not (and what to fix). */
export interface TelegramHealth {
  ok: boolean;
  detail?: string;
}

/** The adapter, plus what a deployment (or test) may want to know about its webhook receiver and health. */
export interface TelegramAdapter extends ChannelAdapter {
  /** Where the webhook receiver listens, once started in webhook mode. */
  webhookAddress(): { host: string; port: number } | undefined;
  /**
   * Not ok before start, after stop, and when polling stopped for good (409 conflict, revoked
   * token): the process keeps running but Telegram users get no answer until it is fixed.
   */
  health(): TelegramHealth;
}

/** What Telegram lets a bot do; the gateway and delivery read this. */
export const TELEGRAM_CAPABILITIES: ChannelCapabilities = {
  threads: true,
  inlineApproval: true,
  edit: true,
  typing: true,
  maxMessageChars: 4096,
  maxButtonPayloadBytes: 64,
};

const COMMANDS = [
  { command: "stop", description: "Stop the running task" },
  { command: "status", description: "Show what the bot is working on" },
  { command: "new", description: "Start a new conversation" },
  { command: "compact", description: "Summarize the earlier conversation to make room" },
  { command: "always", description: "List and revoke what runs here without asking" },
  { command: "help", description: "What the bot does and its commands" },
];

/** How many forum topics the adapter remembers the bot posting in. */
const REMEMBERED_TOPICS = 10_000;

const NOT_OUR_BUTTON = "This is not a valid button.";
const CLICK_FAILED = "That click could not be handled. Please try again.";

/** Explains a failed startup call in words that name what to fix; never includes the token. */
function startupError(error: unknown, apiRoot: string): Error {
  if (error instanceof GrammyError && (error.error_code === 401 || error.error_code === 404)) {
    return new Error(`Telegram rejected TELEGRAM_BOT_TOKEN (${error.error_code} ${error.description}). Copy the bot token from @BotFather into TELEGRAM_BOT_TOKEN.`);
  }
  if (error instanceof HttpError) {
    return new Error(scrubSecrets(`Could not reach the Telegram Bot API at ${apiRoot} (check TELEGRAM_API_ROOT and the network): ${error.message}`));
  }
  return new Error(scrubSecrets(`Telegram startup failed: ${(error as Error).message}`));
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Creates the Telegram adapter. Nothing connects until `start`. */
export function createTelegramAdapter(options: TelegramAdapterOptions): TelegramAdapter {
  const log = options.log ?? silentLogger();
  const apiRoot = (options.apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "");
  registerSecret(options.token);
  if (options.webhook) registerSecret(options.webhook.secret);
  const api = new Api(options.token, { apiRoot, fetch: createBotApiFetch() });
  // Topics the bot posted in, most recently used kept; a forgotten one is still known to the gateway's store.
  const botThreads = new LruMap<string, true>({ max: REMEMBERED_TOPICS });
  const chatQueues = new Map<string, Promise<void>>();
  let bot: { id: number; username: string } | undefined;
  let sink: InboundSink | undefined;
  let poller: UpdatePoller | undefined;
  let webhookServer: WebhookServer | undefined;
  let running = false;
  let pollingFailure: string | undefined;

  const port = {
    ...createTelegramPort({
      api,
      log,
      onPosted: (chatId, threadId) => {
        if (threadId) botThreads.set(`${chatId}:${threadId}`, true);
      },
    }),
    ...createTelegramApproverGroups({ api, log }),
  };
  const reasons = new ReasonReplies({ api, log, sink: () => sink, answer, botId: () => bot?.id, prompts: options.promptStore, keepPromptsMs: options.keepPromptsMs });
  reasons.watchCards(port);

  /** Messages of one chat reach the sink in order; commands skip the line so /stop is never stuck. */
  function deliverMessage(chatId: string, envelope: IngressEnvelope): Promise<void> {
    const target = sink!;
    const send = () =>
      target.message(envelope).catch((error: unknown) => {
        log.warn({ envelopeId: envelope.id, err: (error as Error).message }, "gateway refused a telegram message");
      });
    if (parseBotCommand(envelope.text)) return send();
    const previous = chatQueues.get(chatId);
    const next = previous ? previous.then(send) : send();
    chatQueues.set(chatId, next);
    void next.then(() => {
      if (chatQueues.get(chatId) === next) chatQueues.delete(chatId);
    });
    return next;
  }

  async function answer(queryId: string, text?: string): Promise<void> {
    try {
      await api.answerCallbackQuery(queryId, text ? { text: text.slice(0, 200), show_alert: true } : {});
    } catch (error) {
      log.warn({ err: (error as Error).message }, "could not answer a telegram callback query");
    }
  }

  async function handleClick(query: TelegramCallbackQuery): Promise<void> {
    if (query.data && decodeButtonPayload(query.data)) {
      const answerTimeoutMs = options.clickAnswerTimeoutMs ?? 5000;
      return handleButtonQuery(query, { sink: sink!, port, log, account: options.account, answerTimeoutMs, answer });
    }
    const decoded = query.data ? decodeApprovalPayload(query.data) : undefined;
    if (!decoded) {
      log.warn({ from: query.from.id }, "telegram click with a payload that is not ours");
      await answer(query.id, NOT_OUR_BUTTON);
      return;
    }
    if (decoded.askReason) return reasons.ask(query, decoded.approvalId);
    let outcome: ApprovalClickOutcome | "timeout";
    try {
      outcome = await withTimeout(
        sink!.approvalClick({
          channel: "telegram",
          approvalId: decoded.approvalId,
          choice: decoded.choice,
          actor: { id: String(query.from.id), name: displayName(query.from), isBot: query.from.is_bot },
          ...(query.message ? { messageId: String(query.message.message_id), conversationId: String(query.message.chat.id) } : {}),
        }),
        options.clickAnswerTimeoutMs ?? 5000,
      );
    } catch (error) {
      log.warn({ err: (error as Error).message }, "approval click failed in the gateway");
      outcome = { status: "unknown", message: CLICK_FAILED };
    }
    if (outcome === "timeout") {
      log.warn({ approvalId: decoded.approvalId }, "approval click still pending; answered the query without a result");
      await answer(query.id);
      return;
    }
    await answer(query.id, outcome.status === "accepted" ? undefined : outcome.message);
  }

  /** Handles one raw update; resolves when it is no longer in flight. Never throws. */
  async function handleUpdate(raw: unknown): Promise<void> {
    const update = parseUpdate(raw);
    if (!update || !bot) {
      log.warn("unreadable telegram update dropped");
      return;
    }
    try {
      // A reply to a "Deny with reason…" prompt is a decision, not a message for the bot to answer.
      if (update.message && (await reasons.take(update.message))) return;
      const event = classifyUpdate(update, {
        bot,
        capabilities: TELEGRAM_CAPABILITIES,
        ...(options.account ? { account: options.account } : {}),
        botPostedIn: (chatId, threadId) => (threadId ? botThreads.has(`${chatId}:${threadId}`) : false),
        mentionGate: options.mentionGate ?? true,
      });
      if (event.kind === "ignored") log.debug({ updateId: update.update_id, reason: event.reason }, "telegram update ignored");
      else if (event.kind === "click") await handleClick(event.query);
      else await deliverMessage(event.chatId, event.envelope);
    } catch (error) {
      log.warn({ updateId: update.update_id, err: (error as Error).message }, "telegram update dropped");
    }
  }

  return {
    channel: "telegram",
    capabilities: TELEGRAM_CAPABILITIES,
    port,
    pacing: {
      minIntervalMs: 1000,
      // Groups (negative chat ids) allow 20 messages a minute, across all their topics; private chats
      // about one a second. Telegram sets no bot-wide gap for answers ("30 a second" is its advice for
      // broadcasts), so none is kept here: chats never wait for each other, and a 429 holds its chat only.
      sharedLimits: (target) => [
        { key: `chat:${target.account ?? ""}:${target.conversationId}`, intervalMs: target.conversationId.startsWith("-") ? 3000 : 1000 },
      ],
      // Edits count against a chat as messages do: about 20 a minute in a group, one a second in a private chat.
      editLimits: (target) => [
        { key: `edit:${target.account ?? ""}:${target.conversationId}`, intervalMs: target.conversationId.startsWith("-") ? 3000 : 1000 },
      ],
      progressMode: options.editProgressInPlace ? "edit" : "lines",
      // Telegram does not state a private chat's limit (grammY: send, and wait out retry_after): a private
      // chat is not paced; a 429 holds it for as long as Telegram says. Groups keep their documented 20 a minute.
      paceOnlyAfterRateLimit: (target) => !target.conversationId.startsWith("-"),
    },

    async start(target: InboundSink): Promise<void> {
      if (!options.token) throw new Error("TELEGRAM_BOT_TOKEN is empty. Create a bot with @BotFather and put its token in TELEGRAM_BOT_TOKEN.");
      if (options.webhook && !/^[A-Za-z0-9_-]{1,256}$/.test(options.webhook.secret)) {
        throw new Error("TELEGRAM_WEBHOOK_SECRET must be set in webhook mode: 1-256 characters of A-Z, a-z, 0-9, _ and -.");
      }
      sink = target;
      pollingFailure = undefined;
      reasons.startForgetting();
      try {
        const me = await api.getMe();
        bot = { id: me.id, username: me.username };
      } catch (error) {
        throw startupError(error, apiRoot);
      }
      try {
        await api.setMyCommands(COMMANDS);
      } catch (error) {
        log.warn({ err: (error as Error).message }, "could not register telegram commands");
      }
      if (options.webhook) {
        const url = new URL(options.webhook.url);
        webhookServer = await startWebhookServer({
          secret: options.webhook.secret,
          path: url.pathname,
          host: options.webhook.listen?.host ?? "0.0.0.0",
          port: options.webhook.listen?.port ?? 8080,
          routes: options.webhook.listen?.routes,
          log,
          handle: handleUpdate,
        });
        try {
          await api.setWebhook(options.webhook.url, { secret_token: options.webhook.secret, allowed_updates: ["message", "callback_query"] });
        } catch (error) {
          await webhookServer.close();
          webhookServer = undefined;
          throw new Error(`Telegram refused TELEGRAM_WEBHOOK_URL: ${error instanceof GrammyError ? error.description : (error as Error).message}`);
        }
        running = true;
        log.info({ bot: bot.username, mode: "webhook" }, "telegram connected");
        return;
      }
      try {
        // A webhook left from an earlier deployment would make every poll fail with 409.
        await api.deleteWebhook();
      } catch (error) {
        if (error instanceof GrammyError && error.error_code === 401) throw startupError(error, apiRoot);
        log.warn({ err: (error as Error).message }, "could not remove a webhook before polling; a 409 will say if one is still set");
      }
      poller = new UpdatePoller({
        api,
        log,
        handle: handleUpdate,
        ...(options.offsetStore ? { offsetStore: options.offsetStore } : {}),
        ...(options.pollTimeoutSeconds !== undefined ? { pollTimeoutSeconds: options.pollTimeoutSeconds } : {}),
        ...(options.retryDelayMs !== undefined ? { retryDelayMs: options.retryDelayMs } : {}),
        onFatal: (error) => {
          pollingFailure = error.message;
          log.error(`Telegram polling stopped; no Telegram message is received until this is fixed. ${error.message}`);
        },
      });
      try {
        await poller.start();
      } catch (error) {
        poller = undefined;
        throw error instanceof GrammyError || error instanceof HttpError ? startupError(error, apiRoot) : error;
      }
      running = true;
      log.info({ bot: bot.username, mode: "polling" }, "telegram connected");
    },

    async stop(): Promise<void> {
      running = false;
      reasons.stopForgetting();
      await poller?.stop();
      poller = undefined;
      await webhookServer?.close();
      webhookServer = undefined;
    },

    webhookAddress: () => webhookServer?.address,

    health(): TelegramHealth {
      if (pollingFailure) return { ok: false, detail: pollingFailure };
      return running ? { ok: true } : { ok: false, detail: "not running (not started yet, or stopped)" };
    },
  };
}
