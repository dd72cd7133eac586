/**
 * The bot's log outputs (the log file, stdout) written in batches instead of one system call per
 * line: the lines of FLUSH_AFTER_MS go out together (a turn's lines come a model request apart, so
 * a batch per turn of the event loop would still be a write per line). What is pending is written
 * at once when it grows past MAX_PENDING lines, with `flush()`, and when the process exits; a
 * SIGKILL loses at most the last FLUSH_AFTER_MS of lines.
 */
import type { DestinationStream } from "pino";

const MAX_PENDING = 256;
const FLUSH_AFTER_MS = 20;

const open = new Set<() => void>();
let exitHooked = false;

export interface BatchedLog extends DestinationStream {
  /** Writes what is pending now. */
  flush(): void;
}

export function batchedLog(targets: DestinationStream[]): BatchedLog {
  let pending: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
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
      timer ??= setTimeout(flush, FLUSH_AFTER_MS).unref();
    },
    flush,
  };
}
