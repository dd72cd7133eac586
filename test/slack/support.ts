/** A recording inbound sink and a wait helper for the Slack adapter tests. */
import type { ApprovalClick, ApprovalClickOutcome, IngressEnvelope } from "../../src/envelope.ts";
import type { InboundSink } from "../../src/ports.ts";

/** Records envelopes and clicks; answers clicks with `outcome` (accepted unless a test says otherwise). */
export class RecordingSink implements InboundSink {
  readonly envelopes: IngressEnvelope[] = [];
  readonly clicks: ApprovalClick[] = [];
  outcome: (click: ApprovalClick) => ApprovalClickOutcome = () => ({ status: "accepted", message: "" });

  async message(envelope: IngressEnvelope): Promise<void> {
    this.envelopes.push(envelope);
  }

  async approvalClick(click: ApprovalClick): Promise<ApprovalClickOutcome> {
    this.clicks.push(click);
    return this.outcome(click);
  }
}

/** Polls `check` until it returns something (or throws after `timeoutMs`). */
export async function until<T>(check: () => T | undefined | false, timeoutMs = 2000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits a little to let events that should NOT arrive have their chance. */
export const settle = (ms = 150) => new Promise((r) => setTimeout(r, ms));
