/**
 * The gateway: what every channel hands its inbound events to. Dedupe, access, commands and
 * approval clicks (the control lane: handled at once), then the session lane, the turn, and the
 * reply through delivery. Every message gets an answer or a clear error with its reference id.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { AccessConfig } from "../config/schema.ts";
import {
  parseBotCommand,
  sessionKeyOf,
  type ApprovalClick,
  type ApprovalClickOutcome,
  type IngressEnvelope,
} from "../envelope.ts";
import type { InboundSink, OutboundPort } from "../ports.ts";
import type { PendingApprovals } from "../approval/pending-approvals.ts";
import type { Delivery } from "../delivery/delivery.ts";
import { keepTyping } from "../delivery/typing.ts";
import { runTurn } from "../engine/turn.ts";
import type { ResolvedExecution, TurnEvent } from "../engine/types.ts";
import type { ChatMessage } from "../model/types.ts";
import type { Observer } from "../observe/observer.ts";
import { progressLine } from "../observe/progress.ts";
import type { Store } from "../store/store.ts";
import { AccessControl, REFUSAL_TEXT } from "./access.ts";
import { SessionLanes } from "./lanes.ts";
import { answerCommand } from "./commands.ts";

/** What the gateway knows of one channel. */
export interface ChannelRuntime {
  exec: ResolvedExecution;
  port: OutboundPort;
  access: AccessConfig;
}

export interface GatewayOptions {
  store: Store;
  delivery: Delivery;
  approvals: PendingApprovals;
  log: Logger;
  observer: Observer;
  historyLimit: number;
  dedupeTtlMs: number;
  maxConcurrentTurns: number;
  maxQueuedPerSession: number;
  /** Called after `/new` started a fresh session (to forget what belonged to the old one). */
  onSessionReset?: (sessionKey: string) => Promise<void>;
}

/** Store keys of messages accepted but not yet answered, so that a crash does not lose them silently. */
const INFLIGHT = "inflight:";

/** A short id for a message's whole story; shown in error replies, carried by every log line. */
export const newTraceId = () => randomBytes(5).toString("hex");

/**
 * Drops leading messages until the history starts where a model may start reading: at a user
 * message, or at an assistant answer that is not a tool call (never at tool results whose call
 * was cut off by the history limit).
 */
export function trimHistory(history: ChatMessage[]): ChatMessage[] {
  const start = history.findIndex((m) => m.role === "user" || (m.role === "assistant" && !m.tool_calls?.length));
  return start < 0 ? [] : history.slice(start);
}

export class Gateway {
  private readonly channels = new Map<string, ChannelRuntime>();
  private readonly access = new AccessControl();
  readonly lanes: SessionLanes;
  private readonly o: GatewayOptions;
  private closing = false;

  constructor(options: GatewayOptions) {
    this.o = options;
    this.lanes = new SessionLanes(options);
  }

  addChannel(channel: string, runtime: ChannelRuntime): void {
    this.channels.set(channel, runtime);
  }

  /** The sink an adapter feeds. */
  sink(): InboundSink {
    return {
      message: (env) => this.message(env),
      approvalClick: (click) => this.approvalClick(click),
    };
  }

  /** Accepts (or refuses) one inbound message; resolves before the turn runs. Never rejects. */
  async message(input: IngressEnvelope): Promise<void> {
    const env: IngressEnvelope = { ...input, traceId: input.traceId ?? newTraceId() };
    try {
      await this.accept(env);
    } catch (err) {
      this.o.log.error({ traceId: env.traceId, err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, "message could not be accepted");
      await this.reply(env, `⚠️ Something went wrong on my side and this message was not handled (ref ${env.traceId}).`);
    }
  }

  private async accept(env: IngressEnvelope): Promise<void> {
    const traceId = env.traceId!;
    const sessionKey = sessionKeyOf(env);
    const log = this.o.log.child({ traceId, sessionKey });
    const ev = (event: string, fields: Record<string, unknown> = {}) =>
      this.o.observer.emit({ event, traceId, sessionKey, ...fields });
    ev("envelope.received", { channel: env.channel, sender: env.sender.id, eventId: env.id, chars: env.text.length });

    const runtime = this.channels.get(env.channel);
    if (!runtime) return log.error({ channel: env.channel }, "message from a channel that is not registered");
    if (env.sender.isBot) return ev("envelope.ignored", { reason: "sender is a bot" });
    if (!(await this.o.store.markSeen(env.channel, env.id, this.o.dedupeTtlMs))) {
      return ev("dedupe.dropped", { eventId: env.id });
    }
    const addressed = env.conversation.kind === "dm" || env.mentioned || env.repliedToBot || env.inBotThread;
    const knownThread =
      !addressed &&
      env.conversation.threadId !== undefined &&
      (this.lanes.busy(sessionKey) || (await this.o.store.loadHistory(sessionKey, 1)).length > 0);
    const access = this.access.check(env, runtime.access, Date.now(), knownThread);
    if (access.verdict === "not-addressed") return ev("access.not_addressed");
    if (access.verdict === "refused") {
      ev("access.refused", { reason: access.reason, told: access.tell });
      if (access.tell) await this.say(env, REFUSAL_TEXT);
      return;
    }
    if (this.closing) return void (await this.say(env, "I'm restarting; please send that again in a minute."));

    if (env.text.trim() === "") {
      ev("envelope.empty");
      return this.say(env, "I got an empty message. Write what you need, e.g. \"summarize this thread\".");
    }
    const command = parseBotCommand(env.text);
    if (command) {
      ev("command", { command });
      return this.say(env, await answerCommand(command, env, sessionKey, { lanes: this.lanes, store: this.o.store, onSessionReset: this.o.onSessionReset }));
    }

    const busy = this.lanes.busy(sessionKey);
    const acceptedAt = Date.now();
    // Recorded before the turn can start (and end, deleting it), so that a crash leaves a trace to report.
    const inflightKey = `${INFLIGHT}${traceId}`;
    await this.o.store.setValue(inflightKey, JSON.stringify({ replyTo: env.replyTo, text: Array.from(env.text).slice(0, 80).join(""), at: acceptedAt }));
    const queued = this.lanes.enqueue(sessionKey, () => this.turn(env, sessionKey, runtime, log, acceptedAt));
    // Notices go the way progress lines go, so that a burst of them is posted as one message.
    if (!queued.accepted) {
      await this.o.store.deleteValue(inflightKey);
      ev("lane.full", { waiting: queued.waiting });
      this.o.delivery.progress(env.replyTo, `⚠️ Still busy here with earlier requests, so I did not queue this one; send it again when I'm done, or /stop.`, traceId);
      return;
    }
    ev("lane.queued", { ahead: queued.ahead });
    if (busy) this.o.delivery.progress(env.replyTo, `⏳ Queued: I'll start on this when the current task here is done.`, traceId);
  }

  /**
   * Tells the senders of messages that a previous process accepted but never answered (it crashed or was
   * killed) that they were not finished. Called once at start, after the channels are up.
   */
  async reportUnfinished(): Promise<number> {
    const unfinished = await this.o.store.listValues(INFLIGHT);
    let told = 0;
    for (const { key, value } of unfinished) {
      try {
        const record = JSON.parse(value) as { replyTo: IngressEnvelope["replyTo"]; text: string };
        // A channel not started this time keeps its records until it is.
        if (!this.channels.has(record.replyTo.channel)) continue;
        await this.o.store.deleteValue(key);
        const ref = key.slice(INFLIGHT.length);
        await this.o.delivery.send(
          record.replyTo,
          `⚠️ I restarted while working on your message ("${record.text}"), so it was not finished. Please send it again (ref ${ref}).`,
          "notice",
        );
        told++;
      } catch (err) {
        await this.o.store.deleteValue(key);
        this.o.log.warn({ err: (err as Error).message, key }, "unfinished message could not be reported");
      }
    }
    return told;
  }

  /** Approval clicks: the control lane — never behind a turn. */
  async approvalClick(click: ApprovalClick): Promise<ApprovalClickOutcome> {
    try {
      const traceId = this.o.approvals.traceOf(click.approvalId);
      const outcome = await this.o.approvals.decide(click);
      this.o.observer.emit({ event: "approval.click", traceId, approvalId: click.approvalId, actor: click.actor.id, status: outcome.status });
      return outcome;
    } catch (err) {
      this.o.log.error({ err: (err as Error).message }, "approval click failed");
      return { status: "unknown", message: "Sorry, that click could not be handled; nothing was run." };
    }
  }

  private async turn(env: IngressEnvelope, sessionKey: string, runtime: ChannelRuntime, log: Logger, acceptedAt: number): Promise<void> {
    const traceId = env.traceId!;
    if (this.closing) {
      // Queued behind a turn that shutdown cancelled: say so instead of starting work now.
      this.o.observer.emit({ event: "turn.skipped", traceId, sessionKey, reason: "shutting down" });
      await this.reply(env, "I'm restarting and did not get to this message; please send it again in a minute.");
      return this.o.store.deleteValue(`${INFLIGHT}${traceId}`);
    }
    const controller = new AbortController();
    const turnId = `t${randomBytes(4).toString("hex")}`;
    const end = this.lanes.begin(sessionKey, { turnId, traceId, senderId: env.sender.id, controller, startedAt: Date.now(), text: env.text });
    const stopTyping = keepTyping(runtime.port, env.replyTo, log);
    const emit = (event: TurnEvent) => {
      const line = progressLine(event);
      if (line) this.o.delivery.progress(env.replyTo, line, traceId);
    };
    try {
      const history = trimHistory(await this.o.store.loadHistory(sessionKey, this.o.historyLimit));
      this.o.observer.emit({ event: "turn.start", traceId, sessionKey, turnId, historyMessages: history.length, laneWaitMs: Date.now() - acceptedAt });
      const outcome = await runTurn(runtime.exec, {
        turnId, traceId, sessionKey, envelope: env, history, signal: controller.signal, emit,
      });
      await this.o.store.appendHistory(sessionKey, outcome.newMessages);
      stopTyping();
      const text =
        outcome.status === "failed"
          ? `⚠️ Sorry, I couldn't finish this: ${outcome.error} (ref ${traceId})`
          : outcome.status === "cancelled" && this.closing
            ? "🛑 I'm restarting, so I stopped this task before it finished. Please send it again in a minute."
            : outcome.text;
      const delivered = await this.reply(env, text);
      this.o.observer.emit({ event: delivered ? "reply.delivered" : "reply.failed", traceId, sessionKey, status: outcome.status });
    } catch (err) {
      log.error({ err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, "turn crashed");
      await this.reply(env, `⚠️ Something went wrong on my side and this request was not finished (ref ${traceId}).`);
    } finally {
      stopTyping();
      end();
      await this.o.store.deleteValue(`${INFLIGHT}${traceId}`).catch(() => {});
    }
  }

  /** Posts a reply; false (and an error line) when the platform would not take it. */
  private async reply(env: IngressEnvelope, text: string): Promise<boolean> {
    try {
      await this.o.delivery.send(env.replyTo, text, "reply", env.traceId);
      return true;
    } catch (err) {
      this.o.log.error({ traceId: env.traceId, err: (err as Error).message }, "reply could not be delivered");
      return false;
    }
  }

  private async say(env: IngressEnvelope, text: string): Promise<void> {
    await this.reply(env, text);
  }

  /** Running turns and waiting messages, for status. */
  status(): { runningTurns: number; pendingApprovals: number } {
    return { runningTurns: this.lanes.runningCount, pendingApprovals: this.o.approvals.pendingCount };
  }

  /** Stops accepting, cancels running turns, waits for them and for delivery. */
  async close(timeoutMs = 4000): Promise<void> {
    this.closing = true;
    this.lanes.abortAll();
    await Promise.race([this.lanes.idle(), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    await this.o.delivery.flush(timeoutMs);
  }
}
