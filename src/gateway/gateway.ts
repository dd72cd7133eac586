/**
 * The gateway: what every channel hands its inbound events to. Dedupe, access, commands and
 * approval clicks (the control lane: handled at once), then the session lane, where the turn
 * driver runs the turn and hands its reply to delivery. Every message gets an answer or a clear
 * error with its reference id.
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
import type { ResolvedExecution } from "../engine/types.ts";
import type { Observer } from "../observe/observer.ts";
import type { Store } from "../store/store.ts";
import { AccessControl, REFUSAL_TEXT } from "./access.ts";
import { SessionLanes } from "./lanes.ts";
import { answerCommand, FRESH_THREAD } from "./commands.ts";
import { ButtonRoutes } from "./button-routes.ts";
import { ChatQuestions } from "./chat-questions.ts";
import { ALWAYS_BUTTON_KIND, alwaysList, revokeFromList } from "./always-list.ts";
import { postReply, TurnDriver } from "./turn-driver.ts";
import { closeLeftProgress, envelopeOf, INFLIGHT, inflightRecord, postLeftAnswer, readInflight, RESTARTED_NOTICE, TASK_PROGRESS, type InflightRecord } from "./inflight.ts";
import { ReplicaSessions } from "./replica-sessions.ts";
import type { Coordination } from "../store/coordination.ts";

export { trimHistory } from "./turn-driver.ts";

/** What the gateway knows of one channel. */
export interface ChannelRuntime {
  exec: ResolvedExecution;
  port: OutboundPort;
  access: AccessConfig;
  /** With replicas: false while this replica does not serve the channel (another holds its connection). */
  serving?: () => boolean;
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
  /** Set when several replicas share the database: sessions go through durable inboxes and leases. */
  coordination?: Coordination;
  /** With replicas: how long a session lease lasts without renewal. */
  leaseTtlMs?: number;
}

const QUEUED_NOTICE = "⏳ Queued: I'll start on this when the current task here is done.";
const NOT_QUEUED_NOTICE = "⚠️ Still busy here with earlier requests, so I did not queue this one; send it again when I'm done, or /stop.";
/** How long a message waits behind another before its sender is told it is queued. */
const QUEUED_NOTICE_DELAY_MS = 1500;
/** Said to a sender whose queued message is kept for after a restart. */
const DEFERRED_NOTICE = "⏳ I'm restarting; I'll answer this as soon as I'm back.";

/** A short id for a message's whole story; shown in error replies, carried by every log line. */
export const newTraceId = () => randomBytes(5).toString("hex");

export class Gateway {
  private readonly channels = new Map<string, ChannelRuntime>();
  private readonly access = new AccessControl();
  readonly lanes: SessionLanes;
  /** Handlers of message-button clicks, by kind (`ghb:<kind>:…`); a feature registers its own at start. */
  readonly buttons: ButtonRoutes;
  /** Questions running tools ask in threads (buttons or a reply). */
  readonly questions: ChatQuestions;
  private readonly o: GatewayOptions;
  private readonly driver: TurnDriver;
  private readonly replicas?: ReplicaSessions;
  /** What messages are stamped with as accepted: with replicas the database's clock (the inbox is ordered by it, and other replicas' sweeps compare it). */
  private readonly now: () => number;
  private closing = false;
  /** Set while inbound messages wait for the start to finish (see holdMessages). */
  private held?: Promise<void>;
  /** Traces of the turns the store held at start, and what became of them: never started over. */
  private readonly savedTraces = new Map<string, "resumed" | "unreadable">();
  /** In-flight records resumeMessages left for reportUnfinished. */
  private readonly unfinished: Array<{ key: string; value: string }> = [];

  constructor(options: GatewayOptions) {
    this.o = options;
    this.lanes = new SessionLanes(options);
    const coordination = options.coordination;
    this.now = coordination ? () => coordination.now() : Date.now;
    this.driver = new TurnDriver({ ...options, lanes: this.lanes, draining: () => this.closing, now: this.now });
    this.buttons = new ButtonRoutes(options.log);
    // With replicas, an answer that reaches another replica than the asking one is passed on through the store.
    this.questions = new ChatQuestions({
      delivery: options.delivery, log: options.log, routes: this.buttons, ...(options.coordination ? { shared: options.store } : {}),
    });
    this.buttons.register(ALWAYS_BUTTON_KIND, (click, data) => {
      const runtime = this.channels.get(click.channel);
      if (!runtime) return Promise.resolve({ message: "This channel is not served here; nothing changed." });
      return revokeFromList(click, data, { store: this.o.store, approval: runtime.exec.policy.approval });
    });
    if (options.coordination) {
      this.replicas = new ReplicaSessions({
        ...options, coordination: options.coordination, lanes: this.lanes, driver: this.driver,
        runtimeOf: (channel) => {
          const runtime = this.channels.get(channel);
          return runtime && (runtime.serving?.() ?? true) ? runtime : undefined;
        },
        channelNames: () => [...this.channels.keys()],
      });
    }
  }

  addChannel(channel: string, runtime: ChannelRuntime): void {
    this.channels.set(channel, runtime);
  }

  /** The sink an adapter feeds. */
  sink(): InboundSink {
    return {
      message: (env) => this.message(env),
      approvalClick: (click) => this.approvalClick(click),
      buttonClick: (click) => this.buttons.handle(click),
    };
  }

  /**
   * Holds inbound messages (and tasks) until the returned function is called: at start, until the
   * turns and messages the previous process left are back in their lanes, so that a message sent
   * while the bot was down queues behind them rather than overtaking them.
   */
  holdMessages(): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.held = held;
    return () => {
      if (this.held === held) this.held = undefined;
      release();
    };
  }

  /** Accepts (or refuses) one inbound message; resolves before the turn runs. Never rejects. */
  async message(input: IngressEnvelope): Promise<void> {
    if (this.held) await this.held;
    // What a platform sends never claims to be a schedule's or the API's.
    const { origin: _origin, approvalTarget: _target, ...fromPlatform } = input;
    return this.admit({ ...fromPlatform, traceId: input.traceId ?? newTraceId() });
  }

  /**
   * Runs a turn nobody typed (a schedule's tick, an API call): the same path as a message, without the
   * platform's access lists and mention gate (the config named the task); dedupe by `env.id` keeps a
   * tick from running twice across replicas.
   */
  async task(input: IngressEnvelope): Promise<void> {
    if (this.held) await this.held;
    return this.admit({ ...input, traceId: input.traceId ?? newTraceId() });
  }

  private async admit(env: IngressEnvelope): Promise<void> {
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
    // An answer to a question a running tool asks in this thread (from someone allowed to answer) is not a new turn.
    if (await this.questions.takeReply(env)) return ev("question.answered");
    const addressed = env.conversation.kind === "dm" || env.mentioned || env.repliedToBot || env.inBotThread;
    const knownThread =
      !addressed &&
      env.conversation.threadId !== undefined &&
      (this.lanes.busy(sessionKey) ||
        (await this.o.store.loadHistory(sessionKey, 1)).length > 0 ||
        (await this.o.store.getValue(`${FRESH_THREAD}${sessionKey}`)) !== undefined);
    const access = env.origin ? ({ verdict: "allowed" } as const) : this.access.check(env, runtime.access, Date.now(), knownThread);
    if (access.verdict === "not-addressed") return ev("access.not_addressed");
    if (access.verdict === "refused") {
      ev("access.refused", { reason: access.reason, told: access.tell });
      if (access.tell) await this.say(env, REFUSAL_TEXT);
      return;
    }
    if (this.closing) {
      // Arrived while shutting down: a message for a turn is kept for the next start (a command is not).
      if (!this.replicas && env.text.trim() !== "" && !parseBotCommand(env.text) && (await this.defer(env, sessionKey, Date.now()))) {
        ev("turn.deferred", { reason: "arrived while shutting down" });
        return this.o.delivery.progress(env.replyTo, DEFERRED_NOTICE, traceId);
      }
      return void (await this.say(env, "I'm restarting; please send that again in a minute."));
    }

    if (env.text.trim() === "") {
      ev("envelope.empty");
      return this.say(env, "I got an empty message. Write what you need, e.g. \"summarize this thread\".");
    }
    // A task's prompt (a schedule's, an API call's) is always a prompt, even one that starts with "/".
    const command = env.origin ? undefined : parseBotCommand(env.text);
    if (command === "always") {
      ev("command", { command });
      return this.listAlways(env, sessionKey, runtime);
    }
    if (command) {
      ev("command", { command });
      return this.say(
        env,
        await answerCommand(command, env, sessionKey, {
          lanes: this.lanes, store: this.o.store, onSessionReset: this.o.onSessionReset,
          stopElsewhere: this.replicas ? (key) => this.replicas!.stopElsewhere(key) : undefined,
        }),
      );
    }

    const acceptedAt = this.now();
    // Recorded before the turn can start (and end, deleting it), so that a crash leaves a trace to report.
    const inflightKey = `${INFLIGHT}${traceId}`;
    const inflight = inflightRecord(env, sessionKey, acceptedAt);
    if (this.replicas) return this.acceptShared(env, sessionKey, acceptedAt, inflightKey, JSON.stringify(inflight));
    const busy = this.lanes.busy(sessionKey);
    // A schedule's tick while its previous run still goes (or waits its turn) is skipped, not stacked.
    if (busy && env.origin?.kind === "schedule") {
      ev("schedule.skipped", { schedule: env.origin.name, reason: "the previous run is still going" });
      return;
    }
    await this.o.store.setValue(inflightKey, JSON.stringify(inflight));
    // The "queued" notice waits a moment: a message whose turn starts within it needs none (and a busy
    // chat's rate limit is spent on answers, not notices).
    let notice: NodeJS.Timeout | undefined;
    // A lane that freed while the message was being recorded starts its turn inside enqueue.
    let started = false;
    const queued = this.lanes.enqueue(sessionKey, () => {
      started = true;
      clearTimeout(notice);
      return this.turn(env, runtime, acceptedAt);
    });
    // Notices go the way progress lines go, so that a burst of them is posted as one message.
    if (!queued.accepted) {
      await this.o.store.deleteValue(inflightKey);
      ev("lane.full", { waiting: queued.waiting });
      this.tellSender(env, NOT_QUEUED_NOTICE);
      return;
    }
    ev("lane.queued", { ahead: queued.ahead });
    if (busy && !started) {
      notice = setTimeout(() => this.tellSender(env, QUEUED_NOTICE), QUEUED_NOTICE_DELAY_MS);
      notice.unref();
    }
  }

  /**
   * A notice about a message's place in the queue, to the person who sent it; none for a task's
   * prompt (a schedule's, an API call's), where it would only clutter the report.
   */
  private tellSender(env: IngressEnvelope, text: string): void {
    if (!env.origin) this.o.delivery.progress(env.replyTo, text, env.traceId);
  }

  /** With replicas: the message waits in the session's durable inbox, drained by the lease holder. */
  private async acceptShared(env: IngressEnvelope, sessionKey: string, acceptedAt: number, inflightKey: string, inflight: string): Promise<void> {
    const replicas = this.replicas!;
    const traceId = env.traceId!;
    // The mark and the message go in together (one round trip), unless the session's inbox is full.
    const accepted = await replicas.accept(env, sessionKey, acceptedAt, { maxQueued: this.o.maxQueuedPerSession, mark: { key: inflightKey, value: inflight } });
    if (!accepted.queued) {
      this.o.observer.emit({ event: "lane.full", traceId, sessionKey });
      this.tellSender(env, NOT_QUEUED_NOTICE);
      return;
    }
    this.o.observer.emit({ event: "lane.queued", traceId, sessionKey, ahead: accepted.ahead });
    if (accepted.busy) this.tellSender(env, QUEUED_NOTICE);
  }

  /**
   * Picks up the messages the previous process accepted and did not answer (their in-flight records:
   * inflight.ts), in the order they came. One kept at its shutdown, and one it was cut off from before
   * the turn's first checkpoint, run in their session's lane behind what resumeSaved put there; one
   * whose turn finished gets its answer posted. Call once at start, after resumeSaved; what is left
   * (cut off twice, unreadable, its turn's record unreadable) is for reportUnfinished.
   */
  async resumeMessages(): Promise<{ kept: number; restarted: number; answered: number }> {
    const counts = { kept: 0, restarted: 0, answered: 0 };
    if (this.replicas) return counts;
    const picked: Array<{ traceId: string; record: InflightRecord; env?: IngressEnvelope }> = [];
    for (const { key, value } of await this.o.store.listValues(INFLIGHT)) {
      const traceId = key.slice(INFLIGHT.length);
      const record = readInflight(value);
      // A channel not started this time keeps its records until it is.
      if (record && !this.channels.has(record.replyTo.channel)) continue;
      // A turn with a record continues from it, or (unreadable) is reported: it never starts over.
      const saved = this.savedTraces.get(traceId);
      if (saved === "resumed") continue;
      if (saved === "unreadable") {
        this.unfinished.push({ key, value });
        continue;
      }
      const env = record && record.answer === undefined && (record.deferred || !record.restarted) ? envelopeOf(record, traceId) : undefined;
      if (record && (record.answer !== undefined || env)) picked.push({ traceId, record, env });
      else this.unfinished.push({ key, value });
    }
    for (const { traceId, record, env } of picked.sort((a, b) => a.record.at - b.record.at)) {
      if (env) {
        counts[record.deferred ? "kept" : "restarted"]++;
        this.runAgain(env, record);
      } else {
        counts.answered++;
        void this.postAnswer(traceId, record);
      }
    }
    return counts;
  }

  /**
   * Tells the senders of the messages resumeMessages left that they were not finished (the previous
   * process crashed or was killed while on them). Called once at start, after the channels are up.
   */
  async reportUnfinished(): Promise<number> {
    // With replicas, the sweep reports what no replica works on (another replica's messages are not lost).
    if (this.replicas) return 0;
    let told = 0;
    for (const { key, value } of this.unfinished.splice(0)) {
      const ref = key.slice(INFLIGHT.length);
      await this.o.store.deleteValue(key).catch(() => {});
      const record = readInflight(value);
      if (!record) {
        this.o.log.warn({ key }, "unfinished message could not be reported: its record is unreadable");
        continue;
      }
      try {
        await closeLeftProgress(this.o, record.replyTo, ref);
        await this.o.delivery.send(
          record.replyTo,
          `⚠️ I restarted while working on your message ("${record.text}"), so it was not finished. Please send it again (ref ${ref}).`,
          "notice",
        );
        told++;
      } catch (err) {
        this.o.log.warn({ err: (err as Error).message, key }, "unfinished message could not be reported");
      }
    }
    return told;
  }

  /**
   * A message of the previous process's, queued in its session's lane as if it had just arrived: one
   * kept at shutdown, or one that starts over (the sender is told).
   */
  private runAgain(env: IngressEnvelope, record: InflightRecord): void {
    const runtime = this.channels.get(env.channel)!;
    const traceId = env.traceId!;
    this.o.observer.emit({ event: record.deferred ? "turn.undeferred" : "turn.restarted", traceId, sessionKey: record.sessionKey });
    this.lanes.enqueue(record.sessionKey, async () => {
      // The access lists may have changed with the restart: they are asked again (it was addressed to the bot then).
      const access = env.origin ? ({ verdict: "allowed" } as const) : this.access.check(env, runtime.access, Date.now(), true);
      // A message cut off mid-turn: the status message it had is closed, saying it starts over.
      if (!record.deferred) await closeLeftProgress(this.o, env.replyTo, traceId, access.verdict === "allowed" ? RESTARTED_NOTICE : undefined);
      if (access.verdict !== "allowed") {
        this.o.observer.emit({ event: "access.refused", traceId, sessionKey: record.sessionKey, reason: access.verdict === "refused" ? access.reason : access.verdict });
        await this.o.store.deleteValue(`${INFLIGHT}${traceId}`);
        if (access.verdict === "refused" && access.tell) await this.say(env, REFUSAL_TEXT);
        return;
      }
      // A message starts over once: cut off again from here, it is reported rather than run a third time.
      const { deferred: _d, ...started } = record;
      await this.o.store.setValue(`${INFLIGHT}${traceId}`, JSON.stringify({ ...started, restarted: true }));
      return this.turn(env, runtime, record.at);
    }, { force: true });
  }

  /** Posts the answer of a turn that finished just before the previous process stopped. */
  private async postAnswer(traceId: string, record: InflightRecord): Promise<void> {
    if (!record.posted) this.o.observer.emit({ event: "reply.resent", traceId, sessionKey: record.sessionKey });
    try {
      await postLeftAnswer(this.o, record, traceId);
    } catch (err) {
      this.o.log.error({ traceId, err: (err as Error).message }, "reply could not be delivered");
    }
    await this.o.store.deleteValue(`${INFLIGHT}${traceId}`).catch(() => {});
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

  /**
   * Resumes the turns a previous process left in the store (parked for a person, or stopped at a
   * checkpoint), each in its session's lane. Call once at start, before approvals are re-armed and
   * unfinished messages are reported. Returns the approval ids the parked turns wait for, with
   * their trace ids.
   */
  async resumeSaved(): Promise<Map<string, string>> {
    const live = new Map<string, string>();
    if (this.replicas) {
      // Every replica keeps every parked turn's card live; the sweep resumes turns nobody holds.
      for (const t of await this.o.store.listTurns()) if (t.waitingApprovalId) live.set(t.waitingApprovalId, t.traceId);
      this.replicas.start();
      return live;
    }
    for (const stored of await this.o.store.listTurns()) {
      const runtime = this.channels.get(stored.channel);
      // A channel not started this time keeps its turns until it is.
      if (!runtime) continue;
      const resumed = this.driver.resume(stored, runtime);
      this.savedTraces.set(stored.traceId, resumed ? "resumed" : "unreadable");
      if (!resumed) continue;
      if (stored.waitingApprovalId) live.set(stored.waitingApprovalId, stored.traceId);
    }
    return live;
  }

  private async turn(env: IngressEnvelope, runtime: ChannelRuntime, acceptedAt: number): Promise<void> {
    const traceId = env.traceId!;
    if (this.closing) {
      // Queued behind a turn when shutdown began: it never started, so the next start runs it.
      const sessionKey = sessionKeyOf(env);
      if (await this.defer(env, sessionKey, acceptedAt)) {
        this.o.observer.emit({ event: "turn.deferred", traceId, sessionKey, reason: "shutting down" });
        this.o.delivery.progress(env.replyTo, DEFERRED_NOTICE, traceId);
        return;
      }
      this.o.observer.emit({ event: "turn.skipped", traceId, sessionKey, reason: "shutting down" });
      await this.reply(env, "I'm restarting and did not get to this message; please send it again in a minute.");
      return this.o.store.deleteValue(`${INFLIGHT}${traceId}`);
    }
    await this.driver.start(env, `t${randomBytes(4).toString("hex")}`, runtime, acceptedAt);
  }

  /** Keeps a message that never started for the next start; false when the store would not take it. */
  private async defer(env: IngressEnvelope, sessionKey: string, acceptedAt: number): Promise<boolean> {
    const record: InflightRecord = { ...inflightRecord(env, sessionKey, acceptedAt), deferred: true };
    try {
      await this.o.store.setValue(`${INFLIGHT}${env.traceId}`, JSON.stringify(record));
      return true;
    } catch (err) {
      this.o.log.warn({ traceId: env.traceId, err: (err as Error).message }, "a queued message could not be kept for after the restart");
      return false;
    }
  }

  private reply(env: IngressEnvelope, text: string): Promise<boolean> {
    return postReply(this.o, env, text);
  }

  /** `/always`: the remembered decisions that apply here, with Revoke buttons, as the message's reply. */
  private async listAlways(env: IngressEnvelope, sessionKey: string, runtime: ChannelRuntime): Promise<void> {
    const message = await alwaysList(env, sessionKey, { store: this.o.store, approval: runtime.exec.policy.approval });
    try {
      await this.o.delivery.run(env.replyTo, () => runtime.port.send(env.replyTo, message), env.traceId);
    } catch (err) {
      this.o.log.error({ traceId: env.traceId, err: (err as Error).message }, "the /always list could not be delivered");
    }
  }

  private async say(env: IngressEnvelope, text: string): Promise<void> {
    await this.reply(env, text);
  }

  /** Running turns and waiting messages, for status. */
  status(): { runningTurns: number; parkedTurns: number; askingTurns: number; pendingApprovals: number } {
    return {
      runningTurns: this.lanes.runningCount, parkedTurns: this.lanes.parkedCount, askingTurns: this.lanes.askingCount,
      pendingApprovals: this.o.approvals.pendingCount,
    };
  }

  /**
   * Stops accepting. Parked turns stay in the store; computing turns finish the step they are in
   * (a model request, a running tool) and park at the next boundary, to continue after the
   * restart. Past `timeoutMs` the rest are aborted (their last checkpoint stands). Then delivery
   * is flushed.
   */
  async close(timeoutMs = 4000): Promise<void> {
    this.closing = true;
    this.driver.close();
    this.replicas?.close();
    this.questions.close();
    const idle = this.lanes.idle();
    const graceOver = await Promise.race([idle.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), timeoutMs).unref())]);
    if (graceOver) {
      this.lanes.abortAll();
      await Promise.race([idle, new Promise((r) => setTimeout(r, 500).unref())]);
    }
    await this.o.delivery.flush(timeoutMs);
  }
}
