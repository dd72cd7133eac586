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

/** An observer that logs every event at info level (debug for streamed text deltas) and fans it out. */
export function createObserver(log: Logger): Observer {
  const listeners = new Set<ObserverListener>();
  return {
    emit(event) {
      const level = event.event === "model.delta" ? "debug" : "info";
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
