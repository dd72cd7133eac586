/**
 * A small InboundSink for adapter tests: records every envelope and click, answers clicks with a
 * scripted outcome, and can hold a message "in flight" to imitate a slow gateway.
 */
import type { ApprovalClick, ApprovalClickOutcome, IngressEnvelope } from "../../src/envelope.ts";
import type { InboundSink } from "../../src/ports.ts";

export class RecordingSink implements InboundSink {
  readonly envelopes: IngressEnvelope[] = [];
  readonly clicks: ApprovalClick[] = [];
  /** What the next clicks get back. */
  outcome: ApprovalClickOutcome = { status: "accepted", message: "approved" };
  /** When set, `message` waits on it (the envelope is recorded first). */
  hold: ((envelope: IngressEnvelope) => Promise<void>) | undefined;
  private waiters: Array<() => void> = [];

  async message(envelope: IngressEnvelope): Promise<void> {
    this.envelopes.push(envelope);
    this.notify();
    await this.hold?.(envelope);
  }

  async approvalClick(click: ApprovalClick): Promise<ApprovalClickOutcome> {
    this.clicks.push(click);
    this.notify();
    return this.outcome;
  }

  /** Resolves once `count` envelopes have arrived; rejects after `ms`. */
  async waitForEnvelopes(count: number, ms = 3000): Promise<IngressEnvelope[]> {
    await this.until(() => this.envelopes.length >= count, ms, `${count} envelope(s)`);
    return this.envelopes;
  }

  async until(check: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}
