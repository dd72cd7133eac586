/**
 * The in-flight record of a message (`inflight:<traceId>` in the store): written when a message is
 * accepted, deleted once its answer is out. What it holds tells the next start what to do with a
 * message the previous process did not finish:
 *   - `deferred`: it was still queued when shutdown began, so it never started: it runs as if it had
 *     just arrived;
 *   - `answer`: its turn finished (the history and this mark were stored together) but the answer may
 *     not be out: it is posted (unless `posted` says it is), and the status message finished;
 *   - neither, and the store holds no record of its turn: the process stopped before the turn's first
 *     checkpoint, so nothing that may not run twice has run: it starts over, once (`restarted`);
 *     cut off again, or unreadable, it is reported to its sender as not finished.
 */
import { parseEnvelope, type IngressEnvelope } from "../envelope.ts";
import type { Delivery } from "../delivery/delivery.ts";
import type { Store } from "../store/store.ts";
import type { TurnStatus } from "../engine/types.ts";

export const INFLIGHT = "inflight:";

/**
 * Store keys of the progress a message's turn shows (its status message), by trace id, for after a
 * restart: kept once the status message is posted and whenever the turn parks; forgotten at its end.
 * (Turns parked by an earlier version kept theirs by turn id.)
 */
export const TASK_PROGRESS = "progress:";

/** Said when a message the previous process was cut off from starts over. */
export const RESTARTED_NOTICE = "🔄 I restarted while working on this, so I'm starting it over.";

export interface InflightRecord {
  replyTo: IngressEnvelope["replyTo"];
  /** The message's first 80 characters, to name it in a report. */
  text: string;
  at: number;
  sessionKey: string;
  /** The whole envelope, to run the message again (absent once it is answered). */
  envelope?: unknown;
  deferred?: boolean;
  /** It already started over once after a restart. */
  restarted?: boolean;
  /** The answer, once the turn has finished. */
  answer?: string;
  /** How the turn ended, and its status message as it stood then (TaskProgress.snapshotNow), with the answer. */
  status?: TurnStatus;
  progress?: string;
  /** The answer is out; only the status message's last edit may not be. */
  posted?: boolean;
}

/** The record of a message accepted at `at`. */
export function inflightRecord(env: IngressEnvelope, sessionKey: string, at: number): InflightRecord {
  return { ...namedRecord(env, sessionKey, at), envelope: env };
}

/**
 * The record of a message whose turn finished with `answer`: what the next start needs to post it,
 * and to finish the status message (`progress`) whose last edit may not have been out.
 */
export function answeredRecord(env: IngressEnvelope, sessionKey: string, at: number, answer: string, status?: TurnStatus, progress?: string): InflightRecord {
  return { ...namedRecord(env, sessionKey, at), answer, status, progress };
}

/**
 * Posts the answer of a turn that finished just before the previous process stopped (unless it was
 * out already), then finishes the status message it left (as the turn did: the answer first, the
 * summary in the next edit). Resolves once the answer is out: the summary goes out in its own time
 * (a platform may hold edits back), and nothing waits for it.
 */
export async function postLeftAnswer(deps: { store: Store; delivery: Delivery }, record: InflightRecord, traceId: string): Promise<void> {
  if (!record.posted) await deps.delivery.send(record.replyTo, record.answer!, "reply", traceId);
  await deps.store.deleteValue(`${TASK_PROGRESS}${traceId}`).catch(() => {});
  if (record.progress !== undefined) void deps.delivery.taskProgress(record.replyTo, traceId, record.progress).finish(record.status ?? "done");
}

function namedRecord(env: IngressEnvelope, sessionKey: string, at: number): InflightRecord {
  return { replyTo: env.replyTo, text: Array.from(env.text).slice(0, 80).join(""), at, sessionKey };
}

/** A stored record, or undefined when it cannot be read. */
export function readInflight(value: string): InflightRecord | undefined {
  try {
    const record = JSON.parse(value) as InflightRecord;
    return record && typeof record === "object" && record.replyTo && typeof record.replyTo.channel === "string" ? record : undefined;
  } catch {
    return undefined;
  }
}

/** The envelope a record keeps, checked again; undefined when it has none or it cannot be read. */
export function envelopeOf(record: InflightRecord, traceId: string): IngressEnvelope | undefined {
  if (record.envelope === undefined) return undefined;
  try {
    const env = parseEnvelope(record.envelope);
    return env.traceId === traceId ? env : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Marks a message so that it is reported, never started over: its turn's record was lost (unreadable),
 * and what the turn ran before is unknown.
 */
export async function neverStartOver(store: Store, traceId: string): Promise<void> {
  const key = `${INFLIGHT}${traceId}`;
  const value = await store.getValue(key);
  const record = value === undefined ? undefined : readInflight(value);
  if (record && !record.restarted) await store.setValue(key, JSON.stringify({ ...record, deferred: undefined, restarted: true }));
}

/**
 * A message the previous process did not finish may have left its status message behind, showing a
 * step that will never end: it is closed ("not finished", the summary), with `notice` in it (the
 * message starts over). Without one, `notice` is posted as a line of its own. The kept progress is
 * forgotten before this returns, so that the message's next turn keeps its own under the same key.
 */
export async function closeLeftProgress(deps: { store: Store; delivery: Delivery }, replyTo: IngressEnvelope["replyTo"], traceId: string, notice?: string): Promise<void> {
  const key = `${TASK_PROGRESS}${traceId}`;
  const kept = await deps.store.getValue(key).catch(() => undefined);
  if (kept === undefined) {
    if (notice) deps.delivery.progress(replyTo, notice, traceId);
    return;
  }
  await deps.store.deleteValue(key).catch(() => {});
  const progress = deps.delivery.taskProgress(replyTo, traceId, kept);
  if (notice) progress.event({ type: "notice", text: notice });
  void progress.finish("stopped");
}
