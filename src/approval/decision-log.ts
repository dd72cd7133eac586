/**
 * The decision log, read: every entry of the store's audit log (requests, decisions, refusals,
 * policy changes at start), page by page so that a long log is never held whole, with the filters
 * `gatehouse approvals list` and `export` take and the words their output uses for a decision's
 * source. Writing happens where decisions are made (engine/approval-gate.ts and others) through
 * `Store.appendAudit`, which chains each entry (store/audit-chain.ts).
 */
import { globMatches } from "../policy/glob.ts";
import type { AuditEntry, LoggedAuditEntry, Store } from "../store/store.ts";

/** Entries read from the store at a time. */
const PAGE = 2_000;

/** Every entry of the log, oldest first, read a page at a time. */
export async function* readDecisionLog(store: Store, pageSize = PAGE): AsyncGenerator<LoggedAuditEntry> {
  let afterRow: number | undefined;
  for (;;) {
    const page = await store.readAuditLog({ afterRow, limit: pageSize });
    yield* page;
    if (page.length < pageSize) return;
    afterRow = page.at(-1)!.row;
  }
}

/** Which entries to show. */
export interface DecisionLogFilter {
  /** A tool name, or a pattern where `*` matches any run of characters (`github__*`). */
  tool?: string;
  /** A person, by platform id or name (case-insensitive): entries where they asked or decided. */
  by?: string;
  /** Only entries at or after this time (ms since epoch). */
  since?: number;
}

/** Whether an entry passes the filter. */
export function matchesDecisionFilter(entry: AuditEntry, filter: DecisionLogFilter): boolean {
  if (filter.since !== undefined && entry.at < filter.since) return false;
  if (filter.tool !== undefined && (entry.tool === undefined || !globMatches(filter.tool, entry.tool))) return false;
  if (filter.by !== undefined) {
    const wanted = filter.by.toLowerCase();
    const people = [entry.requesterId, entry.requesterName, entry.actorId, entry.actorName, entry.decidedById, entry.decidedByName];
    if (!people.some((p) => p !== undefined && p.toLowerCase() === wanted)) return false;
  }
  return true;
}

/** Sources at which a person decided (a click on a card, an answer at the terminal). */
const PERSON_SOURCES = new Set(["backchannel", "console"]);

/** Whether a person made this decision (rather than policy, a remembered Always, a timeout…). */
export function decidedByPerson(entry: AuditEntry): boolean {
  return entry.kind === "approval.decided" && PERSON_SOURCES.has(entry.source ?? "");
}

/**
 * Where a decision came from, in the log's words: person, policy, always, timeout,
 * non-interactive, cancelled, hook:<name>; how a request was asked (card, console,
 * non-interactive); for other entries their source as written.
 */
export function sourceLabel(entry: AuditEntry): string {
  if (entry.kind === "approval.requested") return entry.source === "backchannel" ? "card" : entry.source ?? "";
  if (PERSON_SOURCES.has(entry.source ?? "")) return "person";
  return entry.source ?? "";
}

/** What happened, in a word or two: requested, approved, denied, refused by policy, policy widened… */
export function eventLabel(entry: AuditEntry): string {
  switch (entry.kind) {
    case "approval.requested":
      return "requested";
    case "approval.decided":
      return entry.outcome ?? "decided";
    case "approval.click_refused":
      return "click refused";
    case "policy.refused":
      return "refused by policy";
    case "hook.blocked":
      return "blocked by hook";
    case "policy.changed":
      return `policy ${entry.outcome ?? "changed"}`;
    default:
      return entry.outcome ? `${entry.kind} ${entry.outcome}` : entry.kind;
  }
}

/** "Ana (U1)", "U1", or undefined. */
export function personLabel(id: string | undefined, name: string | undefined): string | undefined {
  if (id === undefined) return name;
  return name && name !== id ? `${name} (${id})` : id;
}
