/**
 * The live status message of one task (the `status` progress style): posted as a threaded reply at
 * the task's first tool call, edited as calls start, report and finish — the running step with its
 * latest progress text, the steps done with their durations, a line for a call waiting for approval
 * (with a link to its card where the platform has one) — and closed with a one-line summary when the
 * task ends.
 *
 * Edits coalesce: while one waits for its slot in the platform's edit budget, newer events only change
 * what it will show, so the latest state always wins and there are never more edits than the budget
 * allows. The post and the edits go through the thread's delivery queue, in order with the answer and
 * the cards, with its pacing and its 429 waits. Only the delivery queue talks to the platform.
 */
import type { Logger } from "pino";
import type { ApprovalDecision } from "../approval/types.ts";
import type { TurnEvent, TurnStatus } from "../engine/types.ts";
import { decisionLine, progressLine, summaryLine, waitingLine, type TaskTally } from "../observe/progress.ts";
import { scrubSecrets } from "../observe/scrub.ts";
import type { TaskProgress } from "./task-progress.ts";

/** What a status message sends with; Delivery provides it for the message's thread. */
export interface StatusOutlet {
  /** Runs a platform call in the thread's queue (paced, 429s waited out, in order with the answer). */
  inQueue<T>(call: () => Promise<T>): Promise<T>;
  /** Posts a threaded reply; resolves with its id. */
  send(text: string): Promise<string>;
  edit(messageId: string, text: string): Promise<void>;
  /** When the platform's edit budget for this thread lets the next edit go (epoch ms). */
  nextEditAt(): number;
  /** Takes the edit budget's slot now, as the edit goes; false when it is not free yet. */
  takeEditSlot(): boolean;
  /** Posts a line outside the status message (a notice before the task's first step). */
  line(text: string): void;
  maxMessageChars: number;
  log: Logger;
  /** Called once the status message is posted. */
  posted?: () => void;
}

type Entry =
  | { kind: "step"; callId: string; tool: string; hint?: string; progress?: string; done?: string }
  | { kind: "waiting"; callId: string; tool: string; link?: string }
  | { kind: "line"; text: string };

type Tally = Omit<TaskTally, "end" | "ms">;

/** A posted status message as another process takes it over (see `snapshot`). */
export interface StatusSnapshot {
  version: 1;
  messageId: string;
  startedAt: number;
  entries: Entry[];
  tally: Tally;
}

const TALLY_KEYS = ["steps", "failed", "approvals", "denied", "timedOut"] as const;

/** Reads a snapshot `snapshot()` wrote; undefined for anything else (a newer version, damage). */
export function readStatusSnapshot(json: string | undefined): StatusSnapshot | undefined {
  if (!json) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const v = value as Partial<StatusSnapshot> | null;
  if (!v || v.version !== 1 || typeof v.messageId !== "string" || !v.messageId || typeof v.startedAt !== "number") return undefined;
  if (!Array.isArray(v.entries) || !v.entries.every(isEntry)) return undefined;
  if (!v.tally || !TALLY_KEYS.every((k) => typeof v.tally![k] === "number")) return undefined;
  return v as StatusSnapshot;
}

function isEntry(e: unknown): e is Entry {
  const x = e as Record<string, unknown> | null;
  if (!x || typeof x !== "object") return false;
  if (x.kind === "line") return typeof x.text === "string";
  return (x.kind === "step" || x.kind === "waiting") && typeof x.callId === "string" && typeof x.tool === "string";
}

/** Lines shown at most; earlier ones are counted in a first line. */
const MAX_LINES = 15;
/** Edits that failed in a row before the message is given up (a person deleted it, say). */
const MAX_EDIT_FAILURES = 3;

export class StatusMessage implements TaskProgress {
  private readonly o: StatusOutlet;
  private readonly startedAt: number;
  private readonly entries: Entry[];
  private readonly tally: Tally;
  private phase: "none" | "posting" | "posted" | "given-up" = "none";
  private messageId?: string;
  /** Resolves when the post in flight has gone (or failed). */
  private posting?: Promise<void>;
  /** The text on the platform now. */
  private shown?: string;
  private timer?: NodeJS.Timeout;
  private editing = false;
  private failures = 0;
  private ended?: { status: TurnStatus; at: number };
  private waiters: Array<() => void> = [];

  /** `resume`: the message a previous process posted for this task, which this one goes on editing. */
  constructor(outlet: StatusOutlet, resume?: StatusSnapshot) {
    this.o = outlet;
    this.startedAt = resume?.startedAt ?? Date.now();
    this.entries = resume ? resume.entries.map((e) => ({ ...e })) : [];
    this.tally = resume ? { ...resume.tally } : { steps: 0, failed: 0, approvals: 0, denied: 0, timedOut: 0 };
    if (resume) {
      this.messageId = resume.messageId;
      this.phase = "posted";
    }
  }

  async snapshot(): Promise<string | undefined> {
    await this.posting;
    return this.snapshotNow();
  }

  snapshotNow(): string | undefined {
    if (this.phase !== "posted" || !this.messageId) return undefined;
    const snapshot: StatusSnapshot = { version: 1, messageId: this.messageId, startedAt: this.startedAt, entries: this.entries, tally: this.tally };
    return JSON.stringify(snapshot);
  }

  event(event: TurnEvent): void {
    if (this.ended) return;
    switch (event.type) {
      case "tool.start":
        this.dropUnansweredWait();
        this.entries.push({ kind: "step", callId: event.callId, tool: event.tool, hint: event.hint });
        break;
      case "tool.progress": {
        const step = this.runningStep(event.callId);
        if (!step) return;
        step.progress = event.text;
        break;
      }
      case "tool.finish": {
        const step = this.runningStep(event.callId);
        const done = progressLine(event)!;
        if (step) step.done = done;
        else this.entries.push({ kind: "step", callId: event.callId, tool: event.tool, done });
        this.tally.steps++;
        if (!event.success) this.tally.failed++;
        break;
      }
      case "approval.waiting":
        this.dropUnansweredWait();
        this.entries.push({ kind: "waiting", callId: event.callId, tool: event.tool });
        break;
      case "notice":
        // Before the first step there is no status message to hold it, and a notice alone makes none.
        if (this.phase === "none") return this.o.line(scrubSecrets(event.text));
        this.entries.push({ kind: "line", text: scrubSecrets(event.text) });
        break;
      default:
        return;
    }
    this.changed();
  }

  cardLink(url: string): void {
    const waiting = this.waiting();
    if (!waiting || this.ended) return;
    waiting.link = url;
    this.changed();
  }

  decided(decision: ApprovalDecision): void {
    const waiting = this.waiting();
    if (!waiting || this.ended) return;
    this.entries[this.entries.indexOf(waiting)] = { kind: "line", text: decisionLine(waiting.tool, decision) };
    if (decision.outcome !== "cancelled" && decision.outcome !== "unavailable") this.tally.approvals++;
    if (decision.outcome === "denied") this.tally.denied++;
    if (decision.outcome === "timeout") this.tally.timedOut++;
    this.changed();
  }

  finish(end: TurnStatus): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.ended = { status: end, at: Date.now() };
    this.dropUnansweredWait();
    if (this.phase === "none" || this.phase === "given-up") return Promise.resolve();
    const shown = new Promise<void>((resolve) => this.waiters.push(resolve));
    if (this.phase === "posted") this.scheduleEdit();
    return shown;
  }

  /** What the message shows now: the latest lines within the platform's limit, and the summary once the task ended. */
  render(): string {
    const summary = this.ended ? summaryLine({ ...this.tally, end: this.ended.status, ms: this.ended.at - this.startedAt }) : undefined;
    const budget = Math.floor(this.o.maxMessageChars * 0.75) - (summary?.length ?? 0);
    const lines = this.entries.map((e) => this.lineOf(e));
    const kept: string[] = [];
    let size = 0;
    for (let i = lines.length - 1; i >= 0 && kept.length < MAX_LINES; i--) {
      const line = lines[i]!.length > budget / 2 ? `${lines[i]!.slice(0, Math.floor(budget / 2) - 1)}…` : lines[i]!;
      if (size + line.length + 1 > budget - 40) break;
      kept.unshift(line);
      size += line.length + 1;
    }
    const earlier = lines.length - kept.length;
    if (earlier) kept.unshift(`… ${earlier} earlier line${earlier === 1 ? "" : "s"}`);
    if (summary) kept.push(summary);
    return scrubSecrets(kept.join("\n"));
  }

  private lineOf(entry: Entry): string {
    if (entry.kind === "line") return entry.text;
    if (entry.kind === "waiting") return waitingLine(entry.tool, entry.link);
    if (entry.done) return entry.done;
    if (this.ended) return `⏹ ${entry.tool}: not finished`;
    return entry.progress
      ? progressLine({ type: "tool.progress", callId: entry.callId, tool: entry.tool, text: entry.progress })!
      : progressLine({ type: "tool.start", callId: entry.callId, tool: entry.tool, hint: entry.hint })!;
  }

  private runningStep(callId: string): Extract<Entry, { kind: "step" }> | undefined {
    return this.entries.find((e): e is Extract<Entry, { kind: "step" }> => e.kind === "step" && e.callId === callId && !e.done);
  }

  private waiting(): Extract<Entry, { kind: "waiting" }> | undefined {
    return this.entries.find((e): e is Extract<Entry, { kind: "waiting" }> => e.kind === "waiting");
  }

  /** A wait nobody reported a decision for was answered at once (by policy, or no one to ask): the next event moves on. */
  private dropUnansweredWait(): void {
    const at = this.entries.findIndex((e) => e.kind === "waiting");
    if (at >= 0) this.entries.splice(at, 1);
  }

  private changed(): void {
    if (this.phase === "none" && this.entries.some((e) => e.kind !== "line")) this.post();
    else if (this.phase === "posted") this.scheduleEdit();
  }

  private post(): void {
    this.phase = "posting";
    this.posting = this.o
      .inQueue(async () => {
        const text = this.render();
        const id = await this.o.send(text);
        this.shown = text;
        return id;
      })
      .then(
        (id) => {
          this.messageId = id;
          this.phase = "posted";
          this.o.posted?.();
          this.afterSend(true);
        },
        (err: Error) => this.giveUp(err, "the status message could not be posted"),
      );
  }

  /** Waits for the next slot of the edit budget; the edit shows whatever is latest when it runs. */
  private scheduleEdit(): void {
    if (this.timer || this.editing) return;
    const wait = Math.max(0, this.o.nextEditAt() - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.edit();
    }, wait);
    this.timer.unref?.();
  }

  private edit(): void {
    this.editing = true;
    this.o
      .inQueue(async () => {
        const text = this.render();
        // The slot is taken as the edit goes (a busy queue may have held it past its time); when
        // another edit took it meanwhile, this one waits for the next.
        if (text === this.shown || !this.o.takeEditSlot()) return;
        await this.o.edit(this.messageId!, text);
        this.shown = text;
      })
      .then(
        () => {
          this.failures = 0;
          this.editing = false;
          this.afterSend(true);
        },
        (err: Error) => {
          this.editing = false;
          if (++this.failures >= MAX_EDIT_FAILURES) return this.giveUp(err, "the status message could not be edited");
          this.o.log.warn({ err: err.message }, "status message edit failed");
          this.afterSend(false);
        },
      );
  }

  /** After a post or an edit: another edit when the state moved on meanwhile; the finish's waiters once the end is shown. */
  private afterSend(ok: boolean): void {
    const current = this.render() === this.shown;
    // After a failed edit, only the end is worth another try (the next event brings one otherwise).
    if (!current && (ok || this.ended)) return this.scheduleEdit();
    if (this.ended && current) this.settle();
  }

  private giveUp(err: Error, what: string): void {
    this.phase = "given-up";
    this.o.log.warn({ err: err.message }, what);
    this.settle();
  }

  private settle(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
