/**
 * An InboundSink for adapter tests: records envelopes and clicks, and answers clicks with a
 * scripted outcome.
 */
import type { ApprovalClick, ApprovalClickOutcome, IngressEnvelope } from "../../src/envelope.ts";
import type { InboundSink } from "../../src/ports.ts";

export class RecordingSink implements InboundSink {
  readonly envelopes: IngressEnvelope[] = [];
  readonly clicks: ApprovalClick[] = [];
  /** The answer to the next clicks, oldest first; when empty, clicks are accepted. */
  readonly outcomes: Array<ApprovalClickOutcome | (() => Promise<ApprovalClickOutcome>)> = [];

  async message(envelope: IngressEnvelope): Promise<void> {
    this.envelopes.push(envelope);
  }

  async approvalClick(click: ApprovalClick): Promise<ApprovalClickOutcome> {
    this.clicks.push(click);
    const next = this.outcomes.shift() ?? { status: "accepted", message: "Approved." };
    return typeof next === "function" ? next() : next;
  }

  /** Waits until at least `count` envelopes arrived. */
  async waitForEnvelopes(count: number, timeoutMs = 3000): Promise<IngressEnvelope[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.envelopes.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} envelopes, got ${this.envelopes.length}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.envelopes;
  }
}
