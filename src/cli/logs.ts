/**
 * `gatehouse logs [--follow] [--json] [--trace ID] [--session KEY] [--since 10m]`: reads the
 * bot's log files in the data folder (rotated ones first) and prints a timeline, or the raw
 * JSON lines. `--trace` tells one message's whole story; `--follow` keeps printing new lines.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { readArgs } from "./args.ts";
import { LOG_FILE_NAME, logDir, logFilesOldestFirst } from "../observe/log-files.ts";
import { formatTimelineLine, matchesFilter, parseLogLine, parseSince, traceHeading, type LogEntry, type LogFilter } from "./log-timeline.ts";
import { resolveDataDir } from "./data-dir.ts";

const USAGE = "usage: gatehouse logs [--follow] [--json] [--trace ID] [--session KEY] [--since 10m]\n";
const POLL_MS = 300;

/** Runs the command; returns the exit code. */
export async function runLogs(argv: string[]): Promise<number> {
  const { values } = readArgs(argv, {
    follow: { type: "boolean", short: "f" },
    json: { type: "boolean" },
    trace: { type: "string" },
    session: { type: "string" },
    since: { type: "string" },
  });
  const filter: LogFilter = { traceId: values.trace as string | undefined, sessionKey: values.session as string | undefined };
  if (typeof values.since === "string") {
    filter.since = parseSince(values.since);
    if (filter.since === undefined) {
      process.stderr.write(`gatehouse logs: --since "${values.since}" is neither a duration (30s, 10m, 2h, 1d) nor a date.\n${USAGE}`);
      return 2;
    }
  }
  // `gatehouse logs | head` closes the pipe early; that is a normal way to stop reading.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });
  const dataDir = resolveDataDir();
  const files = logFilesOldestFirst(dataDir);
  if (!files.length && !values.follow) {
    process.stderr.write(`No log file yet in ${logDir(dataDir)} (the bot writes ${LOG_FILE_NAME} there once it has started).\n`);
    return 1;
  }

  const live = path.join(logDir(dataDir), LOG_FILE_NAME);
  const entries: LogEntry[] = [];
  // Where following starts: right after the last complete line read from the live file.
  let followFrom = { position: 0, inode: undefined as number | undefined };
  for (const file of files) {
    const bytes = readFileSync(file);
    const complete = bytes.lastIndexOf(0x0a) + 1;
    if (file === live) followFrom = { position: complete, inode: statSync(file).ino };
    for (const raw of bytes.subarray(0, complete).toString("utf8").split("\n")) {
      const entry = raw ? parseLogLine(raw) : undefined;
      if (entry && matchesFilter(entry, filter)) entries.push(entry);
    }
  }
  const json = Boolean(values.json);
  const withDate = spansDays(entries);
  const traceStart = filter.traceId && entries.length ? Date.parse(entries[0]!.time) : undefined;
  const print = (entry: LogEntry) =>
    process.stdout.write(`${json ? entry.raw : formatTimelineLine(entry, { withDate, since: traceStart })}\n`);

  if (filter.traceId && !json) process.stdout.write(`${traceHeading(filter.traceId, entries)}\n`);
  else if (!entries.length && !json && !values.follow) process.stdout.write("No log lines match.\n");
  for (const entry of entries) print(entry);
  if (!values.follow) return filter.traceId && !entries.length ? 1 : 0;
  await follow(live, followFrom, (entry) => {
    if (matchesFilter(entry, filter)) print(entry);
  });
  return 0;
}

function spansDays(entries: LogEntry[]): boolean {
  if (entries.length < 2) return false;
  return new Date(entries[0]!.time).toDateString() !== new Date(entries.at(-1)!.time).toDateString();
}

/**
 * Polls the live log file for appended lines until SIGINT. When the file rotates (a new file
 * under the same name), the rest of the old one is read from `<name>.1` first.
 */
function follow(live: string, from: { position: number; inode?: number }, onEntry: (entry: LogEntry) => void): Promise<void> {
  let position = from.position;
  let inode = from.inode;
  let partial = "";

  const readFrom = (file: string, from: number): number => {
    if (!existsSync(file)) return from;
    const fd = openSync(file, "r");
    try {
      const size = fstatSync(fd).size;
      if (size <= from) return size < from ? 0 : from;
      const buffer = Buffer.alloc(size - from);
      readSync(fd, buffer, 0, buffer.length, from);
      const lines = (partial + buffer.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const raw of lines) {
        const entry = raw ? parseLogLine(raw) : undefined;
        if (entry) onEntry(entry);
      }
      return size;
    } finally {
      closeSync(fd);
    }
  };

  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const now = existsSync(live) ? statSync(live).ino : undefined;
      if (inode !== undefined && now !== inode) {
        readFrom(`${live}.1`, position);
        position = 0;
        partial = "";
      }
      inode = now;
      position = readFrom(live, position);
    }, POLL_MS);
    process.once("SIGINT", () => {
      clearInterval(timer);
      resolve();
    });
  });
}
