/**
 * Scheduled tasks: at each tick of a schedule's cron expression the bot runs a turn with its prompt,
 * as a message from `schedule:<name>` in the `deliverTo` conversation (its own session there, so
 * yesterday's report is in today's context), through the gateway like any message. A tick runs
 * once however many replicas run: its id (`<name>@<tick time>`) goes through the inbound dedupe in
 * the shared store. A tick missed while the bot was down runs at start when it is less than one
 * period late; an older one is logged as skipped. `gatehouse schedules run <name>` asks for a run
 * now through the store, which every replica checks every few seconds.
 */
import { randomBytes } from "node:crypto";
import { Cron } from "croner";
import type { Logger } from "pino";
import { parseConversationRef, type ScheduleConfig } from "../config/schedules.ts";
import type { ChannelCapabilities, IngressEnvelope } from "../envelope.ts";
import { taskEnvelope } from "./task-envelope.ts";
import type { Observer } from "../observe/observer.ts";
import type { Store } from "../store/store.ts";

/** Store keys: when each schedule last ran and how it ended; and runs asked for by the CLI. */
export const SCHEDULE_LAST = "schedule.last:";
export const SCHEDULE_RUN_REQUEST = "schedule.run:";

/** How long a tick id is remembered by the dedupe (a tick runs once in that window). */
const TICK_DEDUPE_MS = 7 * 24 * 3600_000;
const REQUEST_POLL_MS = 3000;

export interface SchedulerOptions {
  schedules: ScheduleConfig[];
  store: Store;
  log: Logger;
  observer: Observer;
  /** Hands a scheduled turn to the gateway (Gateway.task). */
  run: (env: IngressEnvelope) => Promise<void>;
  /** What a channel can do, when it runs in this process; undefined when it does not. */
  capabilitiesOf: (channel: string) => ChannelCapabilities | undefined;
}

/** What `gatehouse status` shows of a schedule. */
export interface ScheduleStatus {
  name: string;
  next?: string;
  last?: { at: string; outcome: string };
}

/** The thread part of a schedule's session key: a session of its own in its conversation. */
const sessionThread = (schedule: ScheduleConfig) => `schedule-${schedule.name}`;

export class Scheduler {
  private readonly o: SchedulerOptions;
  private readonly jobs: Cron[] = [];
  private poll?: NodeJS.Timeout;

  /**
   * Scheduled turns started here, by trace id, so their outcome can be recorded (bounded); with the
   * schedule's last run as it stood before, put back if the tick does not run after all.
   */
  private readonly inFlight = new Map<string, { name: string; at: string; before?: string }>();
  /** Writes of the last-run records, one after another (record()). */
  private writes: Promise<void> = Promise.resolve();

  constructor(options: SchedulerOptions) {
    this.o = options;
    options.observer.listen((e) => {
      if (typeof e.traceId !== "string" || !this.inFlight.has(e.traceId)) return;
      const run = this.inFlight.get(e.traceId)!;
      // Another replica took the tick: its record is its own.
      if (e.event === "dedupe.dropped") this.inFlight.delete(e.traceId);
      // The previous run still goes, or the conversation was too busy: the tick did not run.
      if (e.event === "lane.full" || e.event === "turn.skipped" || e.event === "schedule.skipped") {
        this.inFlight.delete(e.traceId);
        void this.record(run, run.before);
      }
      // The outcome once the turn ends; once its answer was posted (or could not be), that too.
      if (e.event === "turn.finish") void this.record(run, JSON.stringify({ at: run.at, outcome: String(e.status) }));
      if (e.event === "reply.delivered" || e.event === "reply.failed") {
        this.inFlight.delete(e.traceId);
        const outcome = e.event === "reply.failed" ? `${String(e.status)}, answer not delivered` : String(e.status);
        void this.record(run, JSON.stringify({ at: run.at, outcome }));
      }
    });
  }

  /** Writes a run's record, unless a later run's is there already (runs may end out of order); one write at a time. */
  private record(run: { name: string; at: string }, value: string | undefined): Promise<void> {
    this.writes = this.writes.then(() => this.write(run, value));
    return this.writes;
  }

  private async write(run: { name: string; at: string }, value: string | undefined): Promise<void> {
    const key = `${SCHEDULE_LAST}${run.name}`;
    try {
      const stored = await this.o.store.getValue(key);
      const storedAt = stored ? Date.parse((JSON.parse(stored) as { at: string }).at) : undefined;
      if (storedAt !== undefined && storedAt > Date.parse(run.at)) return;
      if (value === undefined) await this.o.store.deleteValue(key);
      else await this.o.store.setValue(key, value);
    } catch {
      // The record is for `schedules list` and the catch-up at start; a lost write costs neither a run.
    }
  }

  /** Arms every schedule whose channel runs here, and runs the ticks missed while the bot was down. */
  async start(now = new Date()): Promise<void> {
    for (const schedule of this.o.schedules) {
      const { channel } = parseConversationRef(schedule.deliverTo);
      if (!this.o.capabilitiesOf(channel)) {
        this.o.log.warn({ schedule: schedule.name, channel }, "schedule not armed: its channel does not run here");
        continue;
      }
      const job = new Cron(schedule.cron, { timezone: schedule.timezone, protect: true }, (self: Cron) => {
        const tick = self.currentRun() ?? new Date();
        void this.fire(schedule, tick, "tick");
      });
      this.jobs.push(job);
      await this.catchUp(schedule, job, now);
    }
    const pollRequests = () => {
      void this.runRequested().finally(() => {
        this.poll = setTimeout(pollRequests, REQUEST_POLL_MS).unref();
      });
    };
    this.poll = setTimeout(pollRequests, REQUEST_POLL_MS).unref();
  }

  stop(): void {
    for (const job of this.jobs) job.stop();
    this.jobs.length = 0;
    clearTimeout(this.poll);
  }

  /** Next and last run of every schedule. */
  async status(): Promise<ScheduleStatus[]> {
    const out: ScheduleStatus[] = [];
    for (const schedule of this.o.schedules) {
      const next = new Cron(schedule.cron, { timezone: schedule.timezone, paused: true }).nextRun();
      const last = await this.o.store.getValue(`${SCHEDULE_LAST}${schedule.name}`);
      out.push({ name: schedule.name, next: next?.toISOString(), ...(last ? { last: JSON.parse(last) as ScheduleStatus["last"] } : {}) });
    }
    return out;
  }

  /** Runs a schedule now (a person asked for it); its id is new, so it never collides with a tick. */
  async runNow(name: string): Promise<boolean> {
    const schedule = this.o.schedules.find((s) => s.name === name);
    if (!schedule) return false;
    await this.fire(schedule, new Date(), `manual-${randomBytes(3).toString("hex")}`);
    return true;
  }

  /** Runs the most recent tick missed while the bot was down, if it is less than one period late. */
  private async catchUp(schedule: ScheduleConfig, job: Cron, now: Date): Promise<void> {
    let missed: Date | undefined;
    let next: Date | null;
    try {
      [missed] = job.previousRuns(1, now);
      next = job.nextRun(now);
    } catch (err) {
      // croner cannot look back across some rare expressions (29 February): the schedule still runs from now on.
      this.o.log.warn({ schedule: schedule.name, err: (err as Error).message }, "could not work out a tick missed while the bot was down; none is run");
      return;
    }
    if (!missed || !next) return;
    const last = await this.o.store.getValue(`${SCHEDULE_LAST}${schedule.name}`);
    const lastAt = last ? Date.parse((JSON.parse(last) as { at: string }).at) : undefined;
    if (lastAt === undefined || lastAt >= missed.getTime()) return; // never ran yet, or ran that tick
    const period = next.getTime() - missed.getTime();
    if (now.getTime() - missed.getTime() < period) {
      this.o.log.info({ schedule: schedule.name, tick: missed.toISOString() }, "running a tick missed while the bot was down");
      await this.fire(schedule, missed, "tick");
    } else {
      this.o.observer.emit({ event: "schedule.skipped", schedule: schedule.name, tick: missed.toISOString(), reason: "more than one period late" });
    }
  }

  private async runRequested(): Promise<void> {
    try {
      for (const { key, value } of await this.o.store.listValues(SCHEDULE_RUN_REQUEST)) {
        const name = key.slice(SCHEDULE_RUN_REQUEST.length);
        const schedule = this.o.schedules.find((s) => s.name === name);
        if (!schedule || !this.o.capabilitiesOf(parseConversationRef(schedule.deliverTo).channel)) continue;
        // The request's own id makes one replica take it.
        if (!(await this.o.store.markSeen("schedule", `request:${name}:${value}`, TICK_DEDUPE_MS))) continue;
        await this.o.store.deleteValue(key);
        await this.fire(schedule, new Date(), `manual-${value}`);
      }
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, "schedule run requests could not be read");
    }
  }

  private async fire(schedule: ScheduleConfig, tick: Date, kind: string): Promise<void> {
    // A run still waiting (for an approval, say) is not stacked with more of the same, on any replica.
    if (kind === "tick" && (await this.waiting(schedule))) {
      this.o.observer.emit({ event: "schedule.skipped", schedule: schedule.name, tick: tick.toISOString(), reason: "the previous run is still waiting" });
      return;
    }
    // Every replica computes the same tick id (to the second), so the shared dedupe lets one run it.
    tick = new Date(Math.round(tick.getTime() / 1000) * 1000);
    const id = kind === "tick" ? `${schedule.name}@${tick.toISOString()}` : `${schedule.name}@${kind}`;
    const env = this.envelopeFor(schedule, id);
    if (!env) return;
    this.o.observer.emit({ event: "schedule.tick", traceId: env.traceId, schedule: schedule.name, tick: tick.toISOString(), id });
    if (this.inFlight.size > 1000) this.inFlight.clear();
    const before = await this.o.store.getValue(`${SCHEDULE_LAST}${schedule.name}`);
    this.inFlight.set(env.traceId!, { name: schedule.name, at: tick.toISOString(), ...(before ? { before } : {}) });
    await this.o.store.setValue(`${SCHEDULE_LAST}${schedule.name}`, JSON.stringify({ at: tick.toISOString(), outcome: "started" }));
    await this.o.run(env).catch((err: Error) => this.o.log.error({ schedule: schedule.name, err: err.message }, "scheduled turn could not start"));
  }

  /** Whether the schedule's previous run is parked or saved mid-way (its session has a turn record). */
  private async waiting(schedule: ScheduleConfig): Promise<boolean> {
    const deliver = parseConversationRef(schedule.deliverTo);
    const sessionKey = `${deliver.channel}:${deliver.conversationId}:${sessionThread(schedule)}`;
    return (await this.o.store.listTurnsOf(sessionKey)).length > 0;
  }

  private envelopeFor(schedule: ScheduleConfig, id: string): IngressEnvelope | undefined {
    const capabilities = this.o.capabilitiesOf(parseConversationRef(schedule.deliverTo).channel);
    if (!capabilities) return undefined;
    return taskEnvelope({
      kind: "schedule", name: schedule.name, id, traceId: randomBytes(5).toString("hex"), prompt: schedule.prompt,
      deliverTo: schedule.deliverTo, approvalsTo: schedule.approvalsTo, sessionThread: sessionThread(schedule), capabilities,
    });
  }
}
