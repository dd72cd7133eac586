/**
 * "Deny with reason…" on Telegram: a click on the card's fourth button is answered, and the bot
 * asks in the chat with a forced reply to the card ("reply to this message with the reason for
 * denying <tool>"), addressed to the clicker by a mention so that `selective` opens the reply box
 * for them alone. The clicker's reply to that prompt becomes a `deny` with the reply's text as the
 * reason, through the same path as a click, and is not handled as a message for the bot to answer.
 * Someone else's reply to the prompt decides nothing either: they are told that only the clicker
 * was asked. A prompt stays known after the decision, so a second reply is told "Already decided".
 * The prompts are remembered in a bounded map and kept in the store (`promptStore`), so that a reply
 * after a restart still decides; a kept prompt is deleted once it is older than `keepMs` (its card
 * has long expired by then), looked for at start and every hour. A reply to a prompt the store does
 * not know (it could not be kept, or is that old) is told that nothing was recorded and to use the
 * card's buttons if it still has them.
 */
import { GrammyError, type Api } from "grammy";
import type { Logger } from "pino";
import { cardLabel } from "../../src/approval/card.ts";
import { denialReason, parseBotCommand, type ApprovalClick, type ApprovalClickOutcome } from "../../src/envelope.ts";
import { LruMap } from "../../src/lru-map.ts";
import type { InboundSink, OutboundPort } from "../../src/ports.ts";
import { escapeHtml } from "./html.ts";
import { displayName, type TelegramCallbackQuery, type TelegramMessage } from "./inbound.ts";

/** Prompts (and cards) remembered at most; the oldest are forgotten first. */
const REMEMBERED = 10_000;
/** What the reply box shows before the person types (Telegram: at most 64 characters). */
const PLACEHOLDER = "Why deny it?";
/** How long a kept prompt is kept when the adapter is not told (the default approval timeout is 5 minutes). */
export const DEFAULT_KEEP_PROMPTS_MS = 7 * 24 * 3_600_000;
/** How often kept prompts are looked through for old ones. */
const FORGET_EVERY_MS = 3_600_000;
/** A 429 asking for at most this long is waited out once (these messages skip the delivery queue). */
const MAX_RETRY_WAIT_S = 5;

/** Runs a send; after a short 429 (a chat over its burst), waits what Telegram asked and sends once more. */
async function withOneRetry<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    const wait = error instanceof GrammyError && error.error_code === 429 ? (error.parameters?.retry_after ?? 1) : undefined;
    if (wait === undefined || wait > MAX_RETRY_WAIT_S) throw error;
    await new Promise((r) => setTimeout(r, wait * 1000));
    return send();
  }
}

/** A prompt the bot posted: which approval it asks about, and whom. */
interface AskedReason {
  approvalId: string;
  clickerId: string;
  clickerName: string;
  cardMessageId: string;
  /** When the prompt was posted (ms since the epoch); absent in prompts kept by older versions. */
  askedAt?: number;
}

/** Where prompts are kept across restarts, by `<chat id>:<prompt message id>` (the lead wires it to the store). */
export interface PromptStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  /** Every kept prompt, by the same keys. */
  list(): Promise<Array<{ key: string; value: string }>>;
  delete(key: string): Promise<void>;
}

/** An AskedReason read back from the store; undefined for anything else. */
function askedFrom(stored: string | undefined): AskedReason | undefined {
  if (stored === undefined) return undefined;
  try {
    const v = JSON.parse(stored) as Partial<AskedReason> | null;
    const fields = [v?.approvalId, v?.clickerId, v?.clickerName, v?.cardMessageId];
    if (!fields.every((f) => typeof f === "string")) return undefined;
    return {
      approvalId: v!.approvalId!, clickerId: v!.clickerId!, clickerName: v!.clickerName!, cardMessageId: v!.cardMessageId!,
      ...(typeof v!.askedAt === "number" && Number.isFinite(v!.askedAt) ? { askedAt: v!.askedAt } : {}),
    };
  } catch {
    return undefined;
  }
}

export interface ReasonRepliesDeps {
  api: Api;
  log: Logger;
  sink: () => InboundSink | undefined;
  /** How a query is answered (an alert when `text` is given). */
  answer(queryId: string, text?: string): Promise<void>;
  /** The bot's own user id, once known. */
  botId?: () => number | undefined;
  /** Keeps the prompts across restarts; without it they live in memory only. */
  prompts?: PromptStore;
  /** How long a kept prompt is kept (DEFAULT_KEEP_PROMPTS_MS when absent). */
  keepPromptsMs?: number;
}

const key = (chatId: number | string, messageId: number | string) => `${chatId}:${messageId}`;

/** The words of a prompt after the clicker's name; they also tell a prompt asked before a restart. */
const PROMPT_WORDS = ", reply to this message with the reason for denying ";

/** Said to a reply to a prompt this process did not ask (it was asked before a restart). */
const FORGOTTEN_PROMPT =
  "I restarted after asking for this reason, so it was not recorded and nothing was decided. " +
  "If the card still has its buttons, use them again (“Deny with reason…” asks anew).";

/** The prompts posted for "Deny with reason…" clicks, and the replies to them. */
export class ReasonReplies {
  private readonly deps: ReasonRepliesDeps;
  private readonly asked = new LruMap<string, AskedReason>({ max: REMEMBERED });
  private readonly tools = new LruMap<string, string>({ max: REMEMBERED });
  private forgetTimer: NodeJS.Timeout | undefined;

  constructor(deps: ReasonRepliesDeps) {
    this.deps = deps;
  }

  /** Deletes old kept prompts now (not waited for) and every hour until `stopForgetting`. */
  startForgetting(): void {
    if (!this.deps.prompts || this.forgetTimer) return;
    const run = () =>
      void this.forgetOld().catch((error: unknown) =>
        this.deps.log.warn({ err: (error as Error).message }, "could not delete old reason prompts from the store; they are looked for again in an hour"));
    this.forgetTimer = setInterval(run, FORGET_EVERY_MS).unref();
    run();
  }

  stopForgetting(): void {
    clearInterval(this.forgetTimer);
    this.forgetTimer = undefined;
  }

  /**
   * Deletes the kept prompts older than `keepPromptsMs`, and those that cannot be read; a prompt kept
   * by an older version (no `askedAt`) is dated now, so it is kept its full time from here. Returns
   * how many were deleted.
   */
  async forgetOld(now = Date.now()): Promise<number> {
    const prompts = this.deps.prompts;
    if (!prompts) return 0;
    const keepMs = this.deps.keepPromptsMs ?? DEFAULT_KEEP_PROMPTS_MS;
    let deleted = 0;
    for (const { key: promptKey, value } of await prompts.list()) {
      const asked = askedFrom(value);
      if (asked && asked.askedAt === undefined) await prompts.set(promptKey, JSON.stringify({ ...asked, askedAt: now }));
      else if (!asked || now - asked.askedAt! > keepMs) {
        await prompts.delete(promptKey);
        this.asked.delete(promptKey);
        deleted++;
      }
    }
    if (deleted > 0) this.deps.log.info({ deleted }, "deleted old reason prompts from the store");
    return deleted;
  }

  /** Makes `port` remember the tool of each card it posts, so a prompt can name it ("this request" for older cards). */
  watchCards(port: OutboundPort): void {
    const post = port.requestApproval?.bind(port);
    if (!post) return;
    port.requestApproval = async (target, card) => {
      const sent = await post(target, card);
      this.tools.set(card.approvalId, card.tool);
      return sent;
    };
  }

  /** Answers a "Deny with reason…" click, then asks the clicker for the reason in a forced reply to the card. */
  async ask(query: TelegramCallbackQuery, approvalId: string): Promise<void> {
    const card = query.message;
    if (!card) {
      await this.deps.answer(query.id, "This card cannot take a reason here; use Deny.");
      return;
    }
    await this.deps.answer(query.id);
    const tool = this.tools.get(approvalId);
    const what = tool ? `<code>${escapeHtml(cardLabel(tool))}</code>` : "this request";
    const name = displayName(query.from);
    const text = `<a href="tg://user?id=${query.from.id}">${escapeHtml(cardLabel(name))}</a>${PROMPT_WORDS}${what}.`;
    try {
      const sent = await withOneRetry(() =>
        this.deps.api.sendMessage(card.chat.id, text, {
          parse_mode: "HTML",
          // Only a forum topic's id names a thread to post in; outside topics it is the reply chain's first message.
          ...(card.message_thread_id !== undefined && card.is_topic_message ? { message_thread_id: card.message_thread_id } : {}),
          reply_parameters: { message_id: card.message_id, allow_sending_without_reply: true },
          reply_markup: { force_reply: true, selective: true, input_field_placeholder: PLACEHOLDER },
        }),
      );
      const asked: AskedReason = { approvalId, clickerId: String(query.from.id), clickerName: name, cardMessageId: String(card.message_id), askedAt: Date.now() };
      const promptKey = key(card.chat.id, sent.message_id);
      this.asked.set(promptKey, asked);
      await this.deps.prompts?.set(promptKey, JSON.stringify(asked)).catch((error: unknown) =>
        this.deps.log.warn({ err: (error as Error).message, approvalId }, "a reason prompt could not be kept; a reply after a restart will be asked to use the card again"));
    } catch (error) {
      this.deps.log.warn({ err: (error as Error).message, approvalId }, "could not ask for the reason of a denial");
    }
  }

  /**
   * Takes a message that replies to one of the prompts: the clicker's text becomes the decision,
   * anyone else is told it decided nothing. False for every other message (handled as usual).
   */
  async take(message: TelegramMessage): Promise<boolean> {
    const replied = message.reply_to_message;
    if (!replied || !message.from || message.from.is_bot || message.text === undefined || parseBotCommand(message.text)) return false;
    const promptKey = key(message.chat.id, replied.message_id);
    let asked = this.asked.get(promptKey);
    if (!asked) {
      if (!this.isOwnPrompt(replied)) return false;
      // A prompt of this bot's from before a restart: the reply is for it, not a message to answer.
      asked = await this.kept(promptKey);
      if (!asked) {
        await this.reply(message, FORGOTTEN_PROMPT);
        return true;
      }
    }
    if (String(message.from.id) !== asked.clickerId) {
      await this.reply(message, `Only ${asked.clickerName} was asked for this reason; nothing was decided. To deny with a reason of your own, use the card's “Deny with reason…” button.`);
      return true;
    }
    const sink = this.deps.sink();
    if (!sink) {
      await this.reply(message, "The bot is not ready yet; reply again in a moment.");
      return true;
    }
    const reason = denialReason(message.text);
    const click: ApprovalClick = {
      channel: "telegram",
      approvalId: asked.approvalId,
      choice: "deny",
      actor: { id: asked.clickerId, name: displayName(message.from), isBot: false },
      messageId: asked.cardMessageId,
      conversationId: String(message.chat.id),
      ...(reason ? { reason } : {}),
    };
    let outcome: ApprovalClickOutcome;
    try {
      outcome = await sink.approvalClick(click);
    } catch (error) {
      this.deps.log.warn({ err: (error as Error).message }, "a reason for a denial failed in the gateway");
      outcome = { status: "unknown", message: "That reason could not be recorded. Please reply again." };
    }
    if (outcome.status !== "accepted") await this.reply(message, outcome.message);
    return true;
  }

  /** A prompt asked before a restart, from the store; undefined when it was not kept. */
  private async kept(promptKey: string): Promise<AskedReason | undefined> {
    if (!this.deps.prompts) return undefined;
    const asked = askedFrom(await this.deps.prompts.get(promptKey).catch(() => undefined));
    if (asked) this.asked.set(promptKey, asked);
    return asked;
  }

  /** Whether `message` is one of this bot's prompts (when the bot's id is not known yet, any bot's counts). */
  private isOwnPrompt(message: { from?: { id: number; is_bot: boolean }; text?: string }): boolean {
    if (!message.from?.is_bot || !message.text?.includes(PROMPT_WORDS)) return false;
    const own = this.deps.botId?.();
    return own === undefined || String(message.from.id) === String(own);
  }

  private async reply(to: TelegramMessage, text: string): Promise<void> {
    try {
      await withOneRetry(() =>
        this.deps.api.sendMessage(to.chat.id, text, {
          ...(to.message_thread_id !== undefined && to.is_topic_message ? { message_thread_id: to.message_thread_id } : {}),
          reply_parameters: { message_id: to.message_id, allow_sending_without_reply: true },
        }),
      );
    } catch (error) {
      this.deps.log.warn({ err: (error as Error).message }, "could not answer a reply to a reason prompt");
    }
  }
}
