/**
 * Observer events: the structured timeline of a turn (tool.start, tool.finish, approval.requested,
 * approval.decided, policy.refused, loop.detected, …), written as pino lines with the trace id
 * and offered to in-process listeners (status counters, tests).
 */
import type { Logger } from "pino";

export interface ObserverEvent {
  event: string;
  traceId?: string;
  sessionKey?: string;
  [field: string]: unknown;
}

export type ObserverListener = (event: ObserverEvent) => void;

export interface Observer {
  emit(event: ObserverEvent): void;
  /** Adds a listener; returns a function that removes it. */
  listen(listener: ObserverListener): () => void;
}

/**
 * Steps inside a turn that a person rarely reads line by line: logged at debug (`LOG_LEVEL=debug`
 * shows them), so that the default log holds a few lines per message — what arrived, what ran, how
 * it ended — and writing it costs little.
 */
const DEBUG_EVENTS = new Set([
  // tool.finish (info) says what ran, how long and how it ended; its start is a step.
  "tool.start", "model.delta", "model.request", "model.reply", "result.recorded", "lane.queued", "delivery.sent", "delivery.coalesced",
  "lease.acquired", "turn.resume", "receipts.signed",
  // reply.delivered / reply.failed (info) carry the turn's status; a parked turn says so (turn.parked).
  "turn.start", "turn.finish",
]);

/** An observer that logs every event (steps at debug, the rest at info) and fans it out. */
export function createObserver(log: Logger): Observer {
  const listeners = new Set<ObserverListener>();
  return {
    emit(event) {
      const level = DEBUG_EVENTS.has(event.event) ? "debug" : "info";
      log[level](event, event.event);
      for (const l of listeners) {
        try {
          l(event);
        } catch (err) {
          log.warn({ err: (err as Error).message }, "observer listener failed");
        }
      }
    },
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
