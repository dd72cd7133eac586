/**
 * Pending approvals for channels that show buttons (the backchannel): a stored record per
 * request, a card posted in the thread, and one atomic compare-and-set when someone clicks.
 * A click is accepted only from an allowed approver; a second click, a click after expiry and a
 * click on a card from before a restart run nothing and say why.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { ApprovalClick, ApprovalClickOutcome, ReplyTarget } from "../envelope.ts";
import type { Observer } from "../observe/observer.ts";
import type { PendingApprovalRecord, Store } from "../store/store.ts";
import { approvalButtons, formatDuration, type ApprovalCard, type ApprovalResolution } from "./card.ts";
import type { ApprovalDecision, ApprovalManager, ApprovalRequest } from "./types.ts";

/** How cards reach a channel (through its delivery queue, so they keep their place in the thread). */
export interface CardPoster {
  post(target: ReplyTarget, card: ApprovalCard): Promise<string | undefined>;
  resolve(target: ReplyTarget, messageId: string, card: ApprovalCard, resolution: ApprovalResolution): Promise<void>;
}

interface Waiter {
  traceId: string;
  allowAlways: boolean;
  record: PendingApprovalRecord;
  card: ApprovalCard;
  poster: CardPoster;
  settle: (decision: ApprovalDecision) => void;
}

export interface PendingApprovalsOptions {
  store: Store;
  log: Logger;
  observer: Observer;
  timeoutMs: number;
  /** Admins who may approve on a channel, besides the requester. */
  admins: (channel: string) => string[];
}

const who = (p: { id?: string; name?: string }) => p.name ?? p.id ?? "someone";
const STATE_WORDS: Record<string, string> = { approved: "approved", always: "always allowed", denied: "denied" };

export class PendingApprovals {
  private readonly waiters = new Map<string, Waiter>();
  private readonly options: PendingApprovalsOptions;

  constructor(options: PendingApprovalsOptions) {
    this.options = options;
  }

  /** Expires approvals left pending by a previous process (their turns are gone); returns them. */
  async recoverAfterRestart(): Promise<PendingApprovalRecord[]> {
    const stale = await this.options.store.listApprovals("pending");
    await this.options.store.expireAllPending(Date.now());
    return stale;
  }

  /** Edits the cards of approvals that a restart expired, so that no live buttons are left behind. */
  async closeStaleCards(stale: PendingApprovalRecord[], posterFor: (channel: string) => CardPoster | undefined): Promise<void> {
    for (const record of stale) {
      const poster = posterFor(record.channel);
      if (!poster || !record.cardMessageId) continue;
      const card: ApprovalCard = {
        approvalId: record.id, tool: record.tool, argsSummary: record.argsSummary,
        requester: { id: record.requesterId, name: record.requesterName }, approvers: record.approvers,
        expiresAt: record.expiresAt, buttons: approvalButtons(record.id),
      };
      const text = `⌛ Expired: the bot restarted before anyone decided; ${record.tool} was not run.`;
      await poster.resolve(record.target, record.cardMessageId, card, { outcome: "expired", text }).catch((err: Error) => {
        this.options.log.warn({ err: err.message, approvalId: record.id }, "stale approval card could not be updated");
      });
    }
  }

  /** Approvals waiting for a click in this process. */
  get pendingCount(): number {
    return this.waiters.size;
  }

  /** An approval manager that asks through `poster`'s cards. */
  managerFor(poster: CardPoster): ApprovalManager {
    return { kind: "backchannel", request: (req) => this.request(req, poster) };
  }

  async request(req: ApprovalRequest, poster: CardPoster): Promise<ApprovalDecision> {
    const { store, timeoutMs } = this.options;
    const now = Date.now();
    const id = randomBytes(9).toString("base64url");
    const admins = this.options.admins(req.channel).filter((a) => a !== req.requester.id);
    const record: PendingApprovalRecord = {
      id, sessionKey: req.sessionKey, turnId: req.turnId, callId: req.callId, tool: req.tool, argsHash: req.argsHash,
      argsSummary: req.argsSummary, channel: req.channel, requesterId: req.requester.id, requesterName: req.requester.name,
      approvers: [req.requester.id, ...admins], target: req.target, createdAt: now, expiresAt: now + timeoutMs, state: "pending",
    };
    await store.createApproval(record);
    const card: ApprovalCard = {
      approvalId: id, tool: req.tool, argsSummary: req.argsSummary, requester: req.requester,
      approvers: [`${who(req.requester)} (who asked)`, ...admins], expiresAt: record.expiresAt, buttons: approvalButtons(id),
    };
    if (req.signal.aborted) return { outcome: "cancelled", source: "cancelled" };

    return new Promise<ApprovalDecision>((resolve) => {
      let done = false;
      const settle = (decision: ApprovalDecision) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        req.signal.removeEventListener("abort", onAbort);
        this.waiters.delete(id);
        resolve(decision);
      };
      // Set when the request ends without a click; a card posted after that must still show it.
      let ended: ApprovalResolution | undefined;
      const endWith = async (state: "expired" | "cancelled", decision: ApprovalDecision, text: string) => {
        if (await store.decideApproval(id, state, {}, Date.now())) {
          settle(decision);
          ended = { outcome: state === "expired" ? "expired" : "cancelled", text };
          await this.editCard(id, poster, card, ended);
        }
      };
      const timer = setTimeout(() => {
        void endWith("expired", { outcome: "timeout", source: "timeout" }, `⌛ Expired: no decision within ${formatDuration(timeoutMs)}; ${req.tool} was not run.`);
      }, timeoutMs);
      const onAbort = () =>
        void endWith("cancelled", { outcome: "cancelled", source: "cancelled" }, `Cancelled: the request was stopped; ${req.tool} was not run.`);
      req.signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.set(id, { traceId: req.traceId, allowAlways: req.allowAlways !== false, record, card, poster, settle });

      poster
        .post(req.target, card)
        .then(async (messageId) => {
          if (messageId) {
            record.cardMessageId = messageId;
            await store.setApprovalCardMessage(id, messageId);
            // The wait may have timed out or been stopped while the card queued behind other messages.
            if (ended) await this.editCard(id, poster, card, ended);
          }
        })
        .catch(async (err: Error) => {
          this.options.log.warn({ err: err.message, approvalId: id }, "approval card could not be posted");
          if (await store.decideApproval(id, "cancelled", {}, Date.now())) {
            settle({ outcome: "unavailable", source: "backchannel", reason: `the approval card could not be posted: ${err.message}` });
          }
        });
    });
  }

  /** Handles a click. Fast: one read and one compare-and-set; the card edit happens after. */
  /** The trace id of the turn waiting on an approval, when it waits in this process. */
  traceOf(approvalId: string): string | undefined {
    return this.waiters.get(approvalId)?.traceId;
  }

  async decide(click: ApprovalClick): Promise<ApprovalClickOutcome> {
    const { store, observer } = this.options;
    const record = await store.getApproval(click.approvalId);
    if (!record || record.channel !== click.channel) {
      return { status: "unknown", message: "This approval button is not known here; nothing was run." };
    }
    if (record.state !== "pending") return this.finalOutcome(record);
    const now = Date.now();
    if (now >= record.expiresAt) {
      const w = this.waiters.get(record.id);
      if (await store.decideApproval(record.id, "expired", {}, now) && w) {
        w.settle({ outcome: "timeout", source: "timeout" });
        const text = `⌛ Expired: no decision in time; ${record.tool} was not run.`;
        void this.editCard(record.id, w.poster, w.card, { outcome: "expired", text });
      }
      return { status: "expired", message: "This approval has expired; nothing was run. Ask the bot again." };
    }
    if (!record.approvers.includes(click.actor.id)) {
      observer.emit({ event: "approval.click_refused", traceId: this.waiters.get(record.id)?.traceId, approvalId: record.id, sessionKey: record.sessionKey, actor: click.actor.id });
      await store.appendAudit({
        at: now, kind: "approval.click_refused", sessionKey: record.sessionKey, channel: record.channel, tool: record.tool,
        argsHash: record.argsHash, actorId: click.actor.id, actorName: click.actor.name, source: "backchannel", outcome: "not-allowed",
      });
      const allowed = [record.requesterName ?? record.requesterId, ...record.approvers.filter((a) => a !== record.requesterId)];
      return { status: "not-allowed", message: `You may not approve this. Only ${allowed.join(", ")} may decide.` };
    }
    const state = click.choice === "approve" ? "approved" : click.choice === "always" ? "always" : "denied";
    const won = await store.decideApproval(record.id, state, { id: click.actor.id, name: click.actor.name }, now);
    if (!won) {
      const fresh = await store.getApproval(record.id);
      return fresh ? this.finalOutcome(fresh) : { status: "unknown", message: "This approval is gone; nothing was run." };
    }
    const by = { id: click.actor.id, name: click.actor.name };
    const waiter = this.waiters.get(record.id);
    if (waiter) {
      waiter.settle({ outcome: state, by, source: "backchannel" });
      const text =
        state === "approved"
          ? `✅ Approved by ${who(by)}: ${record.tool} runs.`
          : state === "always" && !waiter.allowAlways
            ? `✅ Approved by ${who(by)}: ${record.tool} runs (it always asks, so "Always" counts once).`
            : state === "always"
              ? `✅ Always allowed by ${who(by)}: ${record.tool} runs, and will not ask again here.`
              : `🚫 Denied by ${who(by)}: ${record.tool} was not run.`;
      void this.editCard(record.id, waiter.poster, waiter.card, { outcome: state, by, text });
    }
    return { status: "accepted", message: `${STATE_WORDS[state]} ${record.tool}` };
  }

  private finalOutcome(record: PendingApprovalRecord): ApprovalClickOutcome {
    if (record.state === "expired" || record.state === "cancelled") {
      return { status: "expired", message: "This approval has expired; nothing was run. Ask the bot again." };
    }
    const by = record.decidedByName ?? record.decidedById ?? "someone";
    return { status: "already-decided", message: `Already decided by ${by} (${STATE_WORDS[record.state] ?? record.state}).` };
  }

  private async editCard(id: string, poster: CardPoster, card: ApprovalCard, resolution: ApprovalResolution): Promise<void> {
    const record = await this.options.store.getApproval(id);
    if (!record?.cardMessageId) return;
    try {
      await poster.resolve(record.target, record.cardMessageId, card, resolution);
    } catch (err) {
      this.options.log.warn({ err: (err as Error).message, approvalId: id }, "approval card could not be updated");
    }
  }
}
