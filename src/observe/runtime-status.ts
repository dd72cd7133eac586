/**
 * The running bot's status, kept in the data folder so that `gatehouse status` (another
 * process) can read it: a pid file, and a small JSON snapshot refreshed every few seconds
 * (channels, model endpoint, MCP servers, turns running, approvals pending, last error).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { LruMap } from "../lru-map.ts";
import type { Observer } from "./observer.ts";

export interface StatusSnapshot {
  pid: number;
  startedAt: string;
  updatedAt: string;
  channels: string[];
  /** Channels whose connection broke while running, with what to do. */
  unhealthy?: Array<{ channel: string; detail: string }>;
  /** The model the bot talks to: "<name> at <endpoint>", or the client it was given (the demo model). */
  model: string;
  runningTurns: number;
  /** Turns parked for a person (absent in snapshots of earlier versions). */
  parkedTurns?: number;
  /** Turns whose running tool waits for a person's answer (absent in snapshots of earlier versions). */
  askingTurns?: number;
  pendingApprovals: number;
  sessionsSeen: number;
  mcp: Array<{ name: string; state: string; tools: string[]; lastError?: string }>;
  lastError?: { at: string; event: string; message: string; traceId?: string };
}

interface StatusSources {
  channels: string[];
  health?: () => Array<{ channel: string; ok: boolean; detail?: string }>;
  model: string;
  gateway: { status(): { runningTurns: number; parkedTurns?: number; askingTurns?: number; pendingApprovals: number } };
  mcp: { status(): Array<{ name: string; state: string; tools: string[]; lastError?: string }> };
}

export const PID_FILE = "gatehouse.pid";
export const STATUS_FILE = "status.json";

export class RuntimeStatus {
  private readonly dir: string;
  private timer?: NodeJS.Timeout;
  private sources?: StatusSources;
  private startedAt = new Date().toISOString();
  private lastError?: StatusSnapshot["lastError"];
  /**
   * Sessions seen lately, to count each once. Only the most recent are remembered, so past that many
   * a session that comes back after a long time may be counted again.
   */
  private readonly recentSessions = new LruMap<string, true>({ max: 10_000 });
  private sessionsSeen = 0;

  constructor(dataDir: string, observer: Observer) {
    this.dir = dataDir;
    observer.listen((e) => {
      if (e.sessionKey && e.event === "turn.start" && !this.recentSessions.has(e.sessionKey)) {
        this.recentSessions.set(e.sessionKey, true);
        this.sessionsSeen++;
      }
      if (e.event === "turn.finish" && e.status === "failed") {
        this.lastError = { at: new Date().toISOString(), event: e.event, message: "a turn failed", traceId: e.traceId };
      }
      if (e.event === "tool.finish" && e.success === false && typeof e.error === "string") {
        this.lastError = { at: new Date().toISOString(), event: `tool ${String(e.tool)}`, message: e.error.slice(0, 200), traceId: e.traceId };
      }
    });
  }

  /** Writes the pid file and starts refreshing the snapshot. */
  started(sources: StatusSources): void {
    this.sources = sources;
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(path.join(this.dir, PID_FILE), String(process.pid));
    this.write();
    this.timer = setInterval(() => this.write(), 5000);
    this.timer.unref();
  }

  stopped(): void {
    clearInterval(this.timer);
    // Only this process's own files: another that took the folder over keeps its pid file.
    if (readRuntimeStatus(this.dir)?.pid !== process.pid) return;
    rmSync(path.join(this.dir, PID_FILE), { force: true });
    rmSync(path.join(this.dir, STATUS_FILE), { force: true });
  }

  private write(): void {
    if (!this.sources) return;
    const s = this.sources.gateway.status();
    const snapshot: StatusSnapshot = {
      pid: process.pid, startedAt: this.startedAt, updatedAt: new Date().toISOString(), channels: this.sources.channels,
      unhealthy: (this.sources.health?.() ?? []).filter((h) => !h.ok).map((h) => ({ channel: h.channel, detail: h.detail ?? "not connected" })),
      model: this.sources.model, runningTurns: s.runningTurns, parkedTurns: s.parkedTurns, askingTurns: s.askingTurns, pendingApprovals: s.pendingApprovals,
      sessionsSeen: this.sessionsSeen, mcp: this.sources.mcp.status(), lastError: this.lastError,
    };
    try {
      writeFileSync(path.join(this.dir, STATUS_FILE), JSON.stringify(snapshot, null, 2));
    } catch {
      // The data folder vanished or is read-only; status is best effort.
    }
  }
}

/**
 * Claims the data folder for this process (its pid file, created only if absent), or throws when
 * another bot that is alive holds it: two bots on one folder would share its store, its Telegram
 * offset and its pid file, and answer messages twice. A pid file left by a bot that died is taken over.
 */
export function claimDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, PID_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = readRuntimeStatus(dataDir);
    if (holder?.alive && holder.pid !== process.pid && isNode(holder.pid)) {
      throw new Error(
        `another Gatehouse (pid ${holder.pid}) is running on the data folder ${dataDir}. Stop it first, or give this one a folder of its own ` +
          "(GATEHOUSE_DATA_DIR); several replicas share a PostgreSQL database (DATABASE_URL), each with its own data folder.",
      );
    }
    rmSync(file, { force: true });
  }
  throw new Error(`could not claim the data folder ${dataDir}: its pid file keeps coming back`);
}

/** Whether `pid` runs Node (so a pid reused by another program after a crash does not hold the folder). */
function isNode(pid: number): boolean {
  try {
    return /node|gatehouse/i.test(readFileSync(`/proc/${pid}/cmdline`, "utf8"));
  } catch {
    // No /proc (macOS): the pid being alive has to do.
    return true;
  }
}

/** Reads the snapshot of a running bot; undefined when none is running. */
export function readRuntimeStatus(dataDir: string): { pid: number; alive: boolean; snapshot?: StatusSnapshot } | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(dataDir, PID_FILE), "utf8").trim());
  } catch {
    return undefined;
  }
  let alive = false;
  try {
    process.kill(pid, 0);
    alive = true;
  } catch {
    alive = false;
  }
  let snapshot: StatusSnapshot | undefined;
  try {
    snapshot = JSON.parse(readFileSync(path.join(dataDir, STATUS_FILE), "utf8")) as StatusSnapshot;
  } catch {
    snapshot = undefined;
  }
  return { pid, alive, snapshot };
}
