/**
 * How a task's progress is shown in its thread, by the channel's `progress` setting: `status` (one
 * live status message, see status-message.ts), `lines` (a message per batch of progress lines, as
 * before) or `off` (nothing but the answer and approval cards). The turn driver hands each turn's
 * events to one TaskProgress and never asks which style it is.
 */
import type { ApprovalDecision } from "../approval/types.ts";
import type { TurnEvent, TurnStatus } from "../engine/types.ts";
import { progressLine } from "../observe/progress.ts";

export type ProgressStyle = "status" | "lines" | "off";

/** The progress of one task (a turn) in its thread. */
export interface TaskProgress {
  /** A turn event: a tool starting, reporting, finishing; a wait for approval; a notice. */
  event(event: TurnEvent): void;
  /** The link to the card the task waits on, once the platform gave one. */
  cardLink(url: string): void;
  /** The decision on the call the task waited for (a click, the timeout, a stop). */
  decided(decision: ApprovalDecision): void;
  /** The task ended; resolves once what shows its end is posted (or given up). Call it once. */
  finish(end: TurnStatus): Promise<void>;
  /**
   * What another process needs to go on showing this task's progress where it is (the status
   * message and its lines), as JSON, once what is posted so far has gone out; undefined when
   * there is nothing to go on with. For a turn that parks, so that after a restart its progress
   * continues in the same message.
   */
  snapshot?(): Promise<string | undefined>;
  /**
   * `snapshot` as things stand, without waiting: the lines so far, whether or not their last edit
   * is out yet; undefined while the status message is not posted.
   */
  snapshotNow?(): string | undefined;
}

/** `lines`: each progress line goes to the thread's queue, which posts lines that pile up together. */
export class ProgressLines implements TaskProgress {
  private readonly post: (line: string) => void;
  constructor(post: (line: string) => void) {
    this.post = post;
  }
  event(event: TurnEvent): void {
    const line = progressLine(event);
    if (line) this.post(line);
  }
  cardLink(): void {}
  decided(): void {}
  async finish(): Promise<void> {}
}

/** `off`: nothing but the answer (and the approval cards, which are not progress). */
export const NO_PROGRESS: TaskProgress = {
  event() {},
  cardLink() {},
  decided() {},
  finish: async () => {},
};

/** The keys of the config that choose a channel's progress style. */
export interface ProgressSettings {
  progress: ProgressStyle;
  slack?: { progress?: ProgressStyle };
  discord?: { progress?: ProgressStyle };
  telegram?: { progress?: ProgressStyle };
}

/** A channel's progress style: its own `<channel>.progress`, else the global `progress`. */
export function progressStyleFor(config: ProgressSettings, channel: string): ProgressStyle {
  const own = channel === "slack" || channel === "discord" || channel === "telegram" ? config[channel]?.progress : undefined;
  return own ?? config.progress;
}
