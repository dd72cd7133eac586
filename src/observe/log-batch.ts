/**
 * The bot's log outputs (the log file, stdout) written once per turn of the event loop instead of
 * one system call per line: a busy bot writes many lines in one turn. What is pending is written at
 * once when it grows past MAX_PENDING lines, with `flush()`, and when the process exits.
 */
import type { DestinationStream } from "pino";

const MAX_PENDING = 256;

const open = new Set<() => void>();
let exitHooked = false;

export interface BatchedLog extends DestinationStream {
  /** Writes what is pending now. */
  flush(): void;
}

export function batchedLog(targets: DestinationStream[]): BatchedLog {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = pending.join("");
    pending = [];
    for (const target of targets) target.write(chunk);
  };
  open.add(flush);
  if (!exitHooked) {
    exitHooked = true;
    process.on("exit", () => {
      for (const f of open) f();
    });
  }
  return {
    write(line: string) {
      pending.push(line);
      if (pending.length >= MAX_PENDING) return flush();
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush).unref();
    },
    flush,
  };
}
