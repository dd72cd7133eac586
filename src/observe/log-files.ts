/**
 * The bot's log file in the data folder: where it lives, how it rotates by size
 * (gatehouse.log → gatehouse.log.1 → … → gatehouse.log.<keep>), and which files
 * `gatehouse logs` reads, oldest first. Writer and reader share this one naming scheme.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import path from "node:path";

/** The log file's name inside `<dataDir>/logs/`. */
export const LOG_FILE_NAME = "gatehouse.log";

/** Rotate when the file passes this many bytes. */
export const DEFAULT_MAX_LOG_BYTES = 10 * 1024 * 1024;

/** How many rotated files are kept beside the live one. */
export const DEFAULT_KEEP_LOGS = 3;

/** The folder the log files are in. */
export function logDir(dataDir: string): string {
  return path.join(dataDir, "logs");
}

/** The existing log files, oldest first (highest rotation number first, the live file last). */
export function logFilesOldestFirst(dataDir: string, keep = DEFAULT_KEEP_LOGS): string[] {
  const live = path.join(logDir(dataDir), LOG_FILE_NAME);
  const files: string[] = [];
  for (let n = keep; n >= 1; n--) if (existsSync(`${live}.${n}`)) files.push(`${live}.${n}`);
  if (existsSync(live)) files.push(live);
  return files;
}

export interface RotatingLogOptions {
  maxBytes?: number;
  keep?: number;
}

/**
 * A pino destination that appends to `<dataDir>/logs/gatehouse.log` and rotates it when it
 * passes `maxBytes`. Writes are synchronous so that a line is never split across two files
 * and nothing is lost when the process exits.
 */
export function openRotatingLog(dataDir: string, options: RotatingLogOptions = {}): { write(line: string): void } {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_LOG_BYTES;
  const keep = options.keep ?? DEFAULT_KEEP_LOGS;
  const dir = logDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const live = path.join(dir, LOG_FILE_NAME);
  let fd = openSync(live, "a", 0o600);
  let size = fstatSync(fd).size;

  const rotate = () => {
    closeSync(fd);
    try {
      rmSync(`${live}.${keep}`, { force: true });
      for (let n = keep - 1; n >= 1; n--) if (existsSync(`${live}.${n}`)) renameSync(`${live}.${n}`, `${live}.${n + 1}`);
      renameSync(live, `${live}.1`);
    } finally {
      fd = openSync(live, "a", 0o600);
      size = fstatSync(fd).size;
    }
  };

  return {
    write(line: string) {
      const bytes = Buffer.byteLength(line);
      if (size > 0 && size + bytes > maxBytes) {
        try {
          rotate();
        } catch {
          // Rotation is best effort (e.g. the folder became read-only); keep writing where we can.
        }
      }
      try {
        writeSync(fd, line);
        size += bytes;
      } catch {
        // A full disk must not crash the bot; the line is lost.
      }
    },
  };
}
