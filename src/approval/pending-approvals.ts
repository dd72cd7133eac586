/**
 * Pending approvals for channels that show buttons (the backchannel): a stored record per
 * request, a card posted in the thread, and one atomic compare-and-set when someone clicks, the
 * timeout passes or the turn is stopped. Nothing waits in memory: the decision is handed to the
 * listeners (the gateway resumes the parked turn), and a card stays live across restarts until
 * its timeout — its record and its expiry are in the store. A click is accepted only from an
 * allowed approver; a second click and a click after expiry run nothing and say why.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { ApprovalClick, ApprovalClickOutcome, ReplyTarget } from "../envelope.ts";
import type { Observer } from "../observe/observer.ts";
import type { ApprovalState, ApproverRuleRecord, PendingApprovalRecord, Store } from "../store/store.ts";
import type { ApproverGroups } from "../ports.ts";
import { namesGroups, nobodyToAsk, type ApproverSet } from "./approver-rules.ts";
import { formatDuration, type ApprovalCard, type ApprovalResolution } from "./card.ts";
import { approverNames, cardOf, resolutionOf } from "./record-card.ts";
import type { ApprovalDecision, ApprovalManager, ApprovalRequest, ApprovalWaiting } from "./types.ts";

/** How cards reach a channel (through its delivery queue, so they keep their place in the thread). */
export interface CardPoster {
  /** Post the card again after a restart (a console question, which a new process has not shown). */
  askAgainAfterRestart?: boolean;
  post(target: ReplyTarget, card: ApprovalCard): Promise<string | undefined>;
  resolve(target: ReplyTarget, messageId: string, card: ApprovalCard, resolution: ApprovalResolution): Promise<void>;
  /** Posts a short notice (a card routed elsewhere, an approval towards a quorum) in a thread. */
  say?(target: ReplyTarget, text: string): Promise<void>;
  /** A link to a posted message, where the platform has one. */
  permalink?(target: ReplyTarget, messageId: string): Promise<string | undefined>;
  /** Whether the platform counts `userId` in the rule's groups, roles or chat admins (see OutboundPort.isApprover). */
  isApprover?(conversationId: string, userId: string, of: ApproverGroups): Promise<boolean>;
}

/** A decision that ended a pending approval, for the turn parked on it. */
export interface SettledApproval {
  record: PendingApprovalRecord;
  decision: ApprovalDecision;
}

export interface PendingApprovalsOptions {
  store: Store;
  log: Logger;
  observer: Observer;
  timeoutMs: number;
  /** Admins who may approve on a channel, besides the requester. */
  admins: (channel: string) => string[];
  /** How long a remembered "Always" holds (`approval.alwaysTtl`), for the card's resolution line. */
  alwaysTtl?: string;
  /**
   * The clock expiries are set and checked by: with replicas the database's (Coordination.now), so
   * that every replica expires a card at the same moment; default the local one.
   */
  now?: () => number;
}

const who = (p: { id?: string; name?: string }) => p.name ?? p.id ?? "someone";
const STATE_WORDS: Record<string, string> = { approved: "approved", always: "always allowed", denied: "denied" };
/** setTimeout's longest delay; a later expiry is re-armed when it passes. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Decisions kept for a turn that has not asked for its decision yet (bounded: a turn that is gone never asks). */
const MAX_UNCLAIMED = 10_000;

/** The decision a settled record stands for (a restart lost the in-memory one). */
export function decisionOfRecord(record: PendingApprovalRecord): ApprovalDecision | undefined {
  const by = record.decidedById ? { id: record.decidedById, name: record.decidedByName } : undefined;
  switch (record.state) {
    case "pending":
      return undefined;
    case "approved":
    case "always":
      return { outcome: record.state, by, source: "backchannel" };
    case "denied":
      return { outcome: "denied", by, source: "backchannel", ...(record.decisionReason ? { reason: record.decisionReason } : {}) };
    case "expired":
      return { outcome: "timeout", source: "timeout" };
    case "cancelled":
      return { outcome: "cancelled", source: "cancelled" };
  }
}

export class PendingApprovals {
  private readonly options: PendingApprovalsOptions;
  private readonly posters = new Map<string, CardPoster>();
  /** Where each channel's decisions come from, for the audit log. */
  private readonly kinds = new Map<string, "backchannel" | "console">();
  /** Expiry timers of the approvals pending in this process, with the trace id of their turn. */
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; traceId?: string }>();
  private readonly listeners: Array<(settled: SettledApproval) => boolean> = [];
  private readonly unclaimed = new Map<string, ApprovalDecision>();

  constructor(options: PendingApprovalsOptions) {
    this.options = options;
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  /**
   * Calls `fn` with every decision (click, timeout, stop) that ends a pending approval; `fn` returns
   * true when it handed the decision to the waiting turn. Otherwise the decision is kept for `claim`.
   */
  onSettled(fn: (settled: SettledApproval) => boolean): void {
    this.listeners.push(fn);
  }

  /** An approval manager that asks through `poster`'s cards on `channel` (`console`: questions at the terminal). */
  managerFor(channel: string, poster: CardPoster, kind: "backchannel" | "console" = "backchannel"): ApprovalManager {
    this.posters.set(channel, poster);
    this.kinds.set(channel, kind);
    return { kind, request: (req) => this.request(req, poster) };
  }

  /** Approvals waiting for a decision in this process. */
  get pendingCount(): number {
    return this.timers.size;
  }

  /** The trace id of the turn waiting on an approval, when known here. */
  traceOf(approvalId: string): string | undefined {
    return this.timers.get(approvalId)?.traceId;
  }

  /** Records the request, posts the card (without waiting for it) and arms the expiry. */
  async request(req: ApprovalRequest, poster: CardPoster): Promise<ApprovalDecision | ApprovalWaiting> {
    if (req.signal.aborted) return { outcome: "cancelled", source: "cancelled" };
    const { store, timeoutMs } = this.options;
    const now = this.now();
    const id = randomBytes(9).toString("base64url");
    const set: ApproverSet = req.approvers ?? {
      rule: `approval.approvers.${req.channel}`, users: this.options.admins(req.channel), groups: [], roles: [], chatAdmins: false, selfApprove: true, quorum: 1,
    };
    const admins = set.users.filter((a) => a !== req.requester.id);
    const selfApprove = set.selfApprove && req.requesterMayApprove !== false;
    const unavailable = nobodyToAsk(set, admins, selfApprove, req.channel);
    if (unavailable) return { outcome: "unavailable", source: "non-interactive", reason: unavailable };
    const ruled = set.quorum > 1 || !set.selfApprove || namesGroups(set) || set.routeTo !== undefined;
    const target: ReplyTarget = set.routeTo
      ? { channel: req.target.channel, ...(req.target.account ? { account: req.target.account } : {}), conversationId: set.routeTo.conversation }
      : req.target;
    const askedInLink = set.routeTo ? await this.linkTo(poster, req.target) : undefined;
    const approverRule: ApproverRuleRecord | undefined = ruled
      ? {
          name: set.rule, groups: set.groups, roles: set.roles, chatAdmins: set.chatAdmins, quorum: set.quorum,
          ...(set.routeTo ? { askedIn: req.target, routeLabel: set.routeTo.label ?? set.routeTo.conversation } : {}),
          ...(askedInLink ? { askedInLink } : {}),
        }
      : undefined;
    const record: PendingApprovalRecord = {
      id, sessionKey: req.sessionKey, turnId: req.turnId, callId: req.callId, tool: req.tool, argsHash: req.argsHash,
      argsSummary: req.argsSummary, channel: req.channel, requesterId: req.requester.id, requesterName: req.requester.name,
      approvers: selfApprove ? [req.requester.id, ...admins] : admins, target, createdAt: now, expiresAt: now + timeoutMs, state: "pending",
      // A remembered "Always" would let later calls skip a second person or a quorum.
      allowAlways: req.allowAlways !== false && set.selfApprove && set.quorum === 1,
      ...(approverRule ? { approverRule } : {}),
    };
    await store.createApproval(record);
    this.arm(record, req.traceId);
    poster
      .post(target, cardOf(record))
      .then(async (messageId) => {
        if (!messageId) return;
        await store.setApprovalCardMessage(id, messageId);
        if (approverRule?.askedIn) {
          const link = await poster.permalink?.(target, messageId).catch(() => undefined);
          await this.say(poster, approverRule.askedIn, `⏳ ${record.tool} waits for approval in ${approverRule.routeLabel}${link ? `: ${link}` : ""}.`);
        }
        // Decided while the card queued behind other messages: the posted card must show it.
        const fresh = await store.getApproval(id);
        if (fresh && fresh.state !== "pending") await this.editCard(fresh, resolutionOf(fresh, this.options.alwaysTtl));
      })
      .catch(async (err: Error) => {
        this.options.log.warn({ err: err.message, approvalId: id }, "approval card could not be posted");
        await this.settle(record, "cancelled", {}, {
          outcome: "unavailable", source: "backchannel", reason: `the approval card could not be posted: ${err.message}`,
        }, false);
      });
    return { outcome: "waiting", approvalId: id, expiresAt: record.expiresAt };
  }

  /**
   * At start: re-arms the approvals whose turns are parked in the store (`live`, approval id →
   * trace id), so their cards stay usable; expires the others (their turns are gone) and closes
   * their cards. An approval whose timeout passed while the bot was down expires now.
   */
  async recover(live: Map<string, string>): Promise<{ rearmed: number; closed: number }> {
    const { store, log } = this.options;
    let rearmed = 0;
    let closed = 0;
    for (const record of await store.listApprovals("pending")) {
      if (live.has(record.id)) {
        this.arm(record, live.get(record.id));
        rearmed++;
        const poster = this.posters.get(record.channel);
        if (poster?.askAgainAfterRestart) {
          poster.post(record.target, cardOf(record)).catch((err: Error) => log.warn({ err: err.message, approvalId: record.id }, "approval question could not be asked again"));
        }
        continue;
      }
      const text = `⌛ Expired: the bot restarted and the task that asked is gone; ${record.tool} was not run.`;
      if (await store.decideApproval(record.id, "expired", {}, this.now())) {
        closed++;
        await this.editCard(record, { outcome: "expired", text }).catch((err: Error) => {
          log.warn({ err: err.message, approvalId: record.id }, "stale approval card could not be updated");
        });
      }
    }
    return { rearmed, closed };
  }

  /**
   * The decision on an approval, if one was made: claimed once by the turn parked on it (a decision
   * made in this process before the turn asked, or one the store holds from before a restart).
   */
  async claim(approvalId: string): Promise<ApprovalDecision | undefined> {
    const known = this.unclaimed.get(approvalId);
    if (known) {
      this.unclaimed.delete(approvalId);
      return known;
    }
    const record = await this.options.store.getApproval(approvalId);
    if (!record) return { outcome: "unavailable", source: "backchannel", reason: "the approval request is gone from the store" };
    return decisionOfRecord(record);
  }

  /** Expires every pending approval whose timeout passed (with replicas: one whose replica died). */
  async expireOverdue(now = this.now()): Promise<number> {
    let n = 0;
    for (const record of await this.options.store.listApprovals("pending")) {
      if (record.expiresAt <= now && (await this.settle(record, "expired", {}, { outcome: "timeout", source: "timeout" }))) n++;
    }
    return n;
  }

  /** Ends a pending approval because its turn was stopped (`/stop`, `/new`); false when it was already decided. */
  async cancel(approvalId: string): Promise<boolean> {
    const record = await this.options.store.getApproval(approvalId);
    if (!record || record.state !== "pending") return false;
    return this.settle(record, "cancelled", {}, { outcome: "cancelled", source: "cancelled" });
  }

  /** Handles a click. Fast: one read and one compare-and-set; the card edit happens after. */
  async decide(click: ApprovalClick): Promise<ApprovalClickOutcome> {
    const { store, observer } = this.options;
    const found = await store.getApproval(click.approvalId);
    if (!found || found.channel !== click.channel) {
      return { status: "unknown", message: "This approval button is not known here; nothing was run." };
    }
    const record = await this.adoptCard(found, click);
    if (record.state !== "pending") {
      // A card that never learned its message id still shows buttons: it shows the outcome now.
      if (!found.cardMessageId && record.cardMessageId) void this.editCard(record, resolutionOf(record, this.options.alwaysTtl));
      return this.finalOutcome(record);
    }
    const now = this.now();
    if (now >= record.expiresAt) {
      await this.expire(record);
      return { status: "expired", message: "This approval has expired; nothing was run. Ask the bot again." };
    }
    const refusal = await this.refusalOf(record, click);
    if (refusal) {
      observer.emit({ event: "approval.click_refused", traceId: this.traceOf(record.id), approvalId: record.id, sessionKey: record.sessionKey, actor: click.actor.id });
      await store.appendAudit({
        at: now, kind: "approval.click_refused", sessionKey: record.sessionKey, channel: record.channel, tool: record.tool,
        argsHash: record.argsHash, actorId: click.actor.id, actorName: click.actor.name, source: "backchannel", outcome: refusal.outcome,
      });
      return { status: "not-allowed", message: refusal.message };
    }
    const quorum = record.approverRule?.quorum ?? 1;
    if (quorum > 1 && click.choice !== "deny") return this.vote(record, click, quorum);
    const state = click.choice === "approve" ? "approved" : click.choice === "always" ? "always" : "denied";
    const by = { id: click.actor.id, name: click.actor.name };
    const reason = state === "denied" ? click.reason : undefined;
    const won = await this.settle(record, state, by, { outcome: state, by, source: this.kinds.get(record.channel) ?? "backchannel", ...(reason ? { reason } : {}) });
    if (!won) {
      const fresh = await store.getApproval(record.id);
      return fresh ? this.finalOutcome(fresh) : { status: "unknown", message: "This approval is gone; nothing was run." };
    }
    return { status: "accepted", message: `${STATE_WORDS[state]} ${record.tool}` };
  }

  /**
   * A card posted just before the process stopped may have no message id on record (the post
   * succeeded, the record was never told): a click on the card names its message, which becomes
   * the card's, so that the decision shows on it.
   */
  private async adoptCard(record: PendingApprovalRecord, click: ApprovalClick): Promise<PendingApprovalRecord> {
    if (record.cardMessageId || !click.messageId) return record;
    if (click.conversationId !== undefined && click.conversationId !== record.target.conversationId) return record;
    await this.options.store.setApprovalCardMessage(record.id, click.messageId);
    return { ...record, cardMessageId: click.messageId };
  }

  /** Why `click` may not decide `record` (a bot, the requester under selfApprove: false, someone not named), if it may not. */
  private async refusalOf(record: PendingApprovalRecord, click: ApprovalClick): Promise<{ outcome: string; message: string } | undefined> {
    if (click.actor.isBot) return { outcome: "bot", message: "Bot accounts cannot approve; nothing was changed." };
    if (click.actor.id === record.requesterId && !record.approvers.includes(record.requesterId)) {
      return { outcome: "self-approval", message: `You asked for this call, so someone else must decide it; nothing was changed.` };
    }
    if (record.approvers.includes(click.actor.id)) return undefined;
    const rule = record.approverRule;
    if (rule && namesGroups(rule)) {
      const poster = this.posters.get(record.channel);
      let member: boolean | undefined;
      try {
        member = await poster?.isApprover?.(record.target.conversationId, click.actor.id, rule);
      } catch {
        // The adapter logged why; the person may well be an approver, so they are told to try again.
        return { outcome: "check-failed", message: "Gatehouse could not check whether you may approve this: the platform did not answer. Nothing was changed; try again in a moment." };
      }
      if (member) return undefined;
    }
    return { outcome: "not-allowed", message: `You may not approve this. Only ${approverNames(record).join(", ")} may decide.` };
  }

  /** One approval towards a quorum: counted once per person; the last one needed approves the call. */
  private async vote(record: PendingApprovalRecord, click: ApprovalClick, quorum: number): Promise<ApprovalClickOutcome> {
    const { store } = this.options;
    const { added, votes } = await store.addApprovalVote(record.id, { voterId: click.actor.id, voterName: click.actor.name, at: this.now() });
    if (!added) {
      const fresh = await store.getApproval(record.id);
      if (fresh && fresh.state !== "pending") return this.finalOutcome(fresh);
      const left = quorum - votes.length;
      return { status: "not-allowed", message: `You already approved this; ${left} more ${left === 1 ? "person" : "people"} must approve it. Nothing else was changed.` };
    }
    if (votes.length < quorum) {
      const left = quorum - votes.length;
      const poster = this.posters.get(record.channel);
      if (poster) await this.say(poster, record.target, `👍 ${who(click.actor)} approved ${record.tool} (${votes.length} of ${quorum}); ${left} more approval${left === 1 ? "" : "s"} needed.`);
      return { status: "recorded", message: `Your approval is counted (${votes.length} of ${quorum}); ${left} more ${left === 1 ? "person" : "people"} must approve.` };
    }
    const names = votes.map((v) => v.voterName ?? v.voterId);
    const by = { id: click.actor.id, name: names.join(" and ") };
    const won = await this.settle(record, "approved", by, { outcome: "approved", by, source: this.kinds.get(record.channel) ?? "backchannel" });
    if (!won) {
      const fresh = await store.getApproval(record.id);
      return fresh ? this.finalOutcome(fresh) : { status: "unknown", message: "This approval is gone; nothing was run." };
    }
    return { status: "accepted", message: `approved ${record.tool}` };
  }

  private async say(poster: CardPoster, target: ReplyTarget, text: string): Promise<void> {
    try {
      await poster.say?.(target, text);
    } catch (err) {
      this.options.log.warn({ err: (err as Error).message }, "approval notice could not be posted");
    }
  }

  /** A link to the message a thread's turn answers (the card posted elsewhere links back to it). */
  private async linkTo(poster: CardPoster, target: ReplyTarget): Promise<string | undefined> {
    const messageId = target.replyToMessageId ?? target.threadId;
    if (!messageId || !poster.permalink) return undefined;
    return poster.permalink(target, messageId).catch(() => undefined);
  }

  /** Cancels the expiry timers (shutdown); the approvals stay pending in the store for the next start. */
  close(): void {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private arm(record: PendingApprovalRecord, traceId?: string): void {
    const delay = Math.max(0, Math.min(record.expiresAt - this.now(), MAX_TIMER_MS));
    const timer = setTimeout(() => {
      if (this.now() < record.expiresAt) return this.arm(record, traceId);
      void this.expire(record).catch((err: Error) => this.options.log.warn({ err: err.message, approvalId: record.id }, "approval could not expire"));
    }, delay);
    timer.unref();
    clearTimeout(this.timers.get(record.id)?.timer);
    this.timers.set(record.id, { timer, traceId });
  }

  private async expire(record: PendingApprovalRecord): Promise<void> {
    await this.settle(record, "expired", {}, { outcome: "timeout", source: "timeout" });
  }

  /**
   * The one compare-and-set that ends a pending approval; the winner hands the decision to the
   * listeners and edits the card. False for every caller but the first.
   */
  private async settle(
    record: PendingApprovalRecord,
    state: Exclude<ApprovalState, "pending">,
    by: { id?: string; name?: string },
    decision: ApprovalDecision,
    edit = true,
  ): Promise<boolean> {
    const reason = state === "denied" ? decision.reason : undefined;
    if (!(await this.options.store.decideApproval(record.id, state, by, this.now(), reason))) return false;
    clearTimeout(this.timers.get(record.id)?.timer);
    this.timers.delete(record.id);
    const settled: PendingApprovalRecord = { ...record, state, decidedById: by.id, decidedByName: by.name, decisionReason: reason };
    let taken = false;
    for (const fn of this.listeners) taken = fn({ record: settled, decision }) || taken;
    if (!taken) {
      if (this.unclaimed.size >= MAX_UNCLAIMED) this.unclaimed.delete(this.unclaimed.keys().next().value!);
      this.unclaimed.set(record.id, decision);
    }
    if (edit) void this.editCard(settled, resolutionOf(settled, this.options.alwaysTtl));
    const askedIn = record.approverRule?.askedIn;
    const poster = this.posters.get(record.channel);
    if (askedIn && poster) void this.say(poster, askedIn, resolutionOf(settled, this.options.alwaysTtl).text);
    return true;
  }

  private finalOutcome(record: PendingApprovalRecord): ApprovalClickOutcome {
    if (record.state === "cancelled") {
      return { status: "expired", message: "This request was cancelled (stopped, or the conversation started over); nothing was run." };
    }
    if (record.state === "expired") {
      return { status: "expired", message: "This approval has expired; nothing was run. Ask the bot again." };
    }
    const by = record.decidedByName ?? record.decidedById ?? "someone";
    return { status: "already-decided", message: `Already decided by ${by} (${STATE_WORDS[record.state] ?? record.state}).` };
  }

  private async editCard(record: PendingApprovalRecord, resolution: ApprovalResolution): Promise<void> {
    const poster = this.posters.get(record.channel);
    const messageId = record.cardMessageId ?? (await this.options.store.getApproval(record.id))?.cardMessageId;
    if (!poster || !messageId) return;
    try {
      await poster.resolve(record.target, messageId, cardOf(record), resolution);
    } catch (err) {
      this.options.log.warn({ err: (err as Error).message, approvalId: record.id }, "approval card could not be updated");
    }
  }
}
