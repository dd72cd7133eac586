/**
 * Loop control's detector: notices a model going round in circles within one turn.
 * Three patterns, each counted including the call being checked:
 * - the identical call (same tool, same arguments) repeated: counted in calls;
 * - two calls ping-ponging (A, B, A, B, …) with no new output: counted in switches;
 * - one tool giving the same output for different arguments: counted in calls.
 * Each count is compared with the thresholds: warn (the call runs, the model gets a note),
 * block (the call is not run) and abort (the turn ends). Calls the detector blocks still
 * count, so a model that insists reaches abort. Ignored tools are invisible to it.
 * Use one detector per turn: call `check` exactly once before each call and `record` after.
 */
import { hash as digestOf } from "node:crypto";
import { firstMatchingPattern } from "../policy/glob.ts";
import type { LoopConfig } from "../policy/schema.ts";

/** A call as the detector sees it. */
export interface LoopCall {
  name: string;
  /** The arguments as canonical JSON (see canonicalJson). */
  argsCanonical: string;
  /** `builtin` or `mcp:<server>`; lets `ignoredTools` use `mcp:<server>__*` patterns. */
  owner?: string;
}

/** What to do with a call. */
export type LoopLevel = "ok" | "warn" | "block" | "abort";

/** The verdict for one call; `reason` is one sentence, set whenever the level is not "ok". */
export interface LoopVerdict {
  level: LoopLevel;
  reason?: string;
}

/** One call the detector has seen (plain data, saved with a parked turn). */
export interface LoopAttempt {
  name: string;
  argsCanonical: string;
  /** sha256 of the output; absent until recorded (and forever for calls that never ran). */
  outputHash?: string;
}

/** Only this many recent calls are looked at, so a long turn does not drag in its distant past. */
const WINDOW = 30;

const RANK: Record<LoopLevel, number> = { ok: 0, warn: 1, block: 2, abort: 3 };
const OK: LoopVerdict = Object.freeze({ level: "ok" });

/** Watches one turn's tool calls for loops. */
export class LoopDetector {
  private readonly config: LoopConfig;
  private readonly history: LoopAttempt[];

  /** `history`: what a detector of the same turn saw before (a parked turn resuming). */
  constructor(config: LoopConfig, history: LoopAttempt[] = []) {
    this.config = config;
    this.history = history.slice(-WINDOW).map((a) => ({ ...a }));
  }

  /** What the detector has seen, to be saved with the turn and given back to a new detector. */
  snapshot(): LoopAttempt[] {
    return this.history.map((a) => ({ ...a }));
  }

  /** Judges a call about to run, and counts it as an attempt. */
  check(call: LoopCall): LoopVerdict {
    if (this.ignored(call)) return { level: "ok" };
    this.history.push({ name: call.name, argsCanonical: call.argsCanonical });
    if (this.history.length > WINDOW) this.history.shift();

    let identical = 0;
    for (const attempt of this.history) if (same(attempt, call)) identical++;
    let verdict = this.verdictFor(OK, identical, () => `${call.name} was called ${identical} times with the same arguments`);
    const pingPong = this.pingPong();
    if (pingPong) verdict = this.verdictFor(verdict, pingPong.count, () => pingPong.reason);
    const sameOutput = this.sameOutput(call);
    if (sameOutput) verdict = this.verdictFor(verdict, sameOutput.count, () => sameOutput.reason);
    return verdict;
  }

  /** `verdict`, or the finding's when it ranks higher (the first finding wins a tie). */
  private verdictFor(verdict: LoopVerdict, count: number, reason: () => string): LoopVerdict {
    const level = this.levelFor(count);
    return RANK[level] > RANK[verdict.level] ? { level, reason: reason() } : verdict;
  }

  /** Records the output of a call that ran (after `check`); `outputHash`: its sha256 hex, when the caller has it. */
  record(call: LoopCall, output: string, outputHash?: string): void {
    if (this.ignored(call)) return;
    const hash = outputHash ?? digestOf("sha256", output, "hex");
    for (let i = this.history.length - 1; i >= 0; i--) {
      const attempt = this.history[i];
      if (attempt.outputHash === undefined && same(attempt, call)) {
        attempt.outputHash = hash;
        return;
      }
    }
    this.history.push({ name: call.name, argsCanonical: call.argsCanonical, outputHash: hash });
    if (this.history.length > WINDOW) this.history.shift();
  }

  private ignored(call: LoopCall): boolean {
    return firstMatchingPattern(this.config.ignoredTools, { name: call.name, owner: call.owner ?? "builtin" }) !== undefined;
  }

  private levelFor(count: number): LoopLevel {
    if (count >= this.config.abortAt) return "abort";
    if (count >= this.config.blockAt) return "block";
    if (count >= this.config.warnAt) return "warn";
    return "ok";
  }

  /**
   * Two different calls alternating at the end of the history while neither gives new output.
   * Counted as the switches between them (A, B, A, B is 3), and only once one of them has
   * repeated its output, so a first A, B, A is not yet a loop.
   */
  private pingPong(): { count: number; reason: string } | undefined {
    const h = this.history;
    const n = h.length;
    const a = h[n - 1];
    const b = h[n - 2];
    if (n < 4 || same(a, b)) return undefined;
    let length = 2;
    while (length < n && same(h[n - 1 - length], length % 2 === 0 ? a : b)) length++;
    if (length < 4) return undefined;
    const run = h.slice(n - length);
    let repeated = false;
    for (const call of [a, b]) {
      const outputs = run.filter((x) => same(x, call) && x.outputHash !== undefined).map((x) => x.outputHash);
      if (new Set(outputs).size > 1) return undefined; // new output: the calls are getting somewhere
      if (outputs.length > 1) repeated = true;
    }
    if (!repeated) return undefined;
    const names = a.name === b.name ? `${a.name} (with two sets of arguments)` : `${b.name} and ${a.name}`;
    return { count: length - 1, reason: `${names} switched back and forth ${length - 1} times without new output` };
  }

  /**
   * The tool's recent calls, newest first, that all returned its latest output: counted with
   * the current call when their arguments differ (the same arguments are the identical pattern).
   */
  private sameOutput(call: LoopCall): { count: number; reason: string } | undefined {
    // The tool's earlier calls (the current one is last in the history), newest first.
    const h = this.history;
    let i = h.length - 2;
    while (i >= 0 && (h[i]!.name !== call.name || h[i]!.outputHash === undefined)) i--;
    if (i < 0) return undefined;
    const latest = h[i]!.outputHash;
    let run = 0;
    let otherArguments = false;
    for (let j = h.length - 2; j >= 0; j--) {
      const attempt = h[j]!;
      if (attempt.name !== call.name) continue;
      if (attempt.outputHash !== undefined && attempt.outputHash !== latest) break;
      run++;
      if (attempt.argsCanonical !== call.argsCanonical) otherArguments = true;
    }
    if (!otherArguments) return undefined;
    const count = run + 1;
    return { count, reason: `${call.name} was called ${count} times with different arguments and keeps returning the same output` };
  }
}

function same(a: LoopCall, b: LoopCall): boolean {
  return a.name === b.name && a.argsCanonical === b.argsCanonical;
}
