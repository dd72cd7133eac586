/**
 * `/always`: what is remembered where it is asked — the thread's own decisions (everyone's), the
 * conversation's, and the asker's own everywhere — one line each saying the tool, for whom, when it
 * was given and when it expires, with a Revoke button; and the click that revokes one.
 *
 * The list a message shows is kept in the store (`always.list:<id>`, for 30 days) and its buttons
 * name it, so a revoke can edit the message to say who revoked what, on whichever replica or after a
 * restart. A decision is revoked only by the person it covers or an approver of the channel
 * (`approval.approvers`); one that covers everyone in a place, by anyone shown its list there.
 */
import { randomBytes } from "node:crypto";
import { cardLabel } from "../approval/card.ts";
import { encodeButtonPayload, type ButtonClick, type IngressEnvelope } from "../envelope.ts";
import type { ApprovalConfig } from "../policy/schema.ts";
import { scrubSecrets } from "../observe/scrub.ts";
import { parseAlwaysScope } from "../policy/always-scope.ts";
import { formatSpan } from "../policy/duration.ts";
import type { ButtonClickOutcome, MessageButton, OutboundText } from "../ports.ts";
import type { AlwaysRule, Store } from "../store/store.ts";

/** The button kind of a Revoke button: `ghb:always:<list id>.<decision id>`. */
export const ALWAYS_BUTTON_KIND = "always";
/** At most this many decisions are listed in one message; the rest are counted and left to the CLI. */
export const MAX_LISTED = 8;

const LIST_KEY = "always.list:";
const LIST_KEPT_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
const DATA = /^([A-Za-z0-9_-]{4,16})\.([A-Za-z0-9_-]{4,24})$/;

/** A posted list, as kept for its buttons. */
interface ListRecord {
  at: number;
  header: string;
  lines: Array<{ ruleId: string; label: string; text: string }>;
  footer: string;
  /** Decision id → who revoked it from this list. */
  revoked: Record<string, string>;
}

export interface AlwaysListDeps {
  store: Store;
  /** The channel's approval settings: who besides the covered person may revoke. */
  approval: Pick<ApprovalConfig, "approvers">;
  now?: () => number;
}

/** "2025-01-31 09:00 UTC". */
const when = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** The line of one decision, without its number. */
function lineOf(rule: AlwaysRule, env: IngressEnvelope, now: number, showId: boolean): string {
  const parts = parseAlwaysScope(rule.scope);
  const personId = parts?.person?.slice(parts.person.indexOf(":") + 1);
  const who = personId === undefined ? "everyone here" : cardLabel(rule.personName ?? personId, 40);
  const where =
    parts?.kind === "sender" ? `everywhere on ${env.channel}`
    : parts?.kind === "conversation" ? "in this conversation"
    : env.conversation.threadId ? "in this thread" : "in this chat";
  const expiry = rule.expiresAt === undefined ? "does not expire" : `expires ${when(rule.expiresAt)} (in ${formatSpan(rule.expiresAt - now)})`;
  return `${cardLabel(rule.tool, 60)} for ${who}, ${where} · given ${when(rule.createdAt)} · ${expiry}${showId ? ` · id ${rule.id}` : ""}`;
}

/** The decisions that apply where `env` was sent, unexpired: the session's, the conversation's, the sender's own. */
async function applying(store: Store, env: IngressEnvelope, sessionKey: string, now: number): Promise<AlwaysRule[]> {
  const scopes = [`session:${sessionKey}`, `conversation:${env.channel}:${env.conversation.id}`, `sender:${env.channel}:${env.sender.id}`];
  const seen = new Set<string>();
  const rules: AlwaysRule[] = [];
  for (const under of scopes) {
    for (const rule of await store.listAlwaysRules({ under })) {
      if (seen.has(rule.id) || (rule.expiresAt !== undefined && rule.expiresAt <= now)) continue;
      seen.add(rule.id);
      rules.push(rule);
    }
  }
  return rules;
}

let lastPrune = 0;

/** Forgets lists posted more than 30 days ago (at most once an hour per process). */
async function pruneLists(store: Store, now: number): Promise<void> {
  if (now - lastPrune < PRUNE_EVERY_MS) return;
  lastPrune = now;
  for (const { key, value } of await store.listValues(LIST_KEY)) {
    const at = readRecord(value)?.at ?? 0;
    if (now - at > LIST_KEPT_MS) await store.deleteValue(key);
  }
}

function readRecord(value: string | undefined): ListRecord | undefined {
  if (value === undefined) return undefined;
  try {
    const r = JSON.parse(value) as ListRecord;
    return typeof r.at === "number" && Array.isArray(r.lines) && r.revoked && typeof r.revoked === "object" ? r : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The answer to `/always` sent in `env`'s place: the list with a Revoke button per decision, as much
 * of it as fits `env`'s channel. Where buttons cannot be clicked (the console), each line names its id
 * for `gatehouse approvals always --revoke`.
 */
export async function alwaysList(env: IngressEnvelope, sessionKey: string, deps: AlwaysListDeps): Promise<OutboundText> {
  const now = (deps.now ?? Date.now)();
  const rules = await applying(deps.store, env, sessionKey, now);
  if (!rules.length) {
    const hint = env.conversation.threadId === undefined && env.capabilities.threads ? " Send /always in a thread to see what is remembered there." : "";
    return { text: `Nothing is remembered here: every tool that asks will ask again.${hint}`, plain: true, kind: "reply" };
  }
  const clickable = env.capabilities.inlineApproval;
  const listId = randomBytes(6).toString("base64url");
  const lines = rules.map((rule, i) => ({ ruleId: rule.id, label: `Revoke ${i + 1}: ${cardLabel(rule.tool, 40)}`, text: `${i + 1}. ${lineOf(rule, env, now, !clickable)}` }));
  let record: ListRecord = { at: now, header: "", lines: [], footer: "", revoked: {} };
  for (let shown = Math.min(MAX_LISTED, lines.length); shown >= 1; shown--) {
    const more = rules.length - shown;
    const footer = [
      more > 0 ? `…and ${more} more: see them all with \`gatehouse approvals always\`.` : "",
      clickable ? "The person a decision covers, or an approver, may revoke it." : "Revoke one with `gatehouse approvals always --revoke <id>`.",
    ].filter(Boolean).join("\n");
    record = { at: now, header: `Remembered "Always" decisions here (${rules.length}):`, lines: lines.slice(0, shown), footer, revoked: {} };
    if (renderText(record, new Map()).length <= env.capabilities.maxMessageChars) break;
  }
  if (clickable) {
    await deps.store.setValue(`${LIST_KEY}${listId}`, JSON.stringify(record));
    await pruneLists(deps.store, now);
  }
  const state = new Map(record.lines.map((l) => [l.ruleId, "open" as const]));
  return { text: renderText(record, state), plain: true, kind: "reply", buttons: clickable ? renderButtons(record, listId, state) : undefined };
}

type LineState = "open" | "gone" | "expired";

function renderText(record: ListRecord, state: Map<string, LineState>): string {
  const lines = record.lines.map((l) => {
    const by = record.revoked[l.ruleId];
    if (by !== undefined) return `${l.text} — revoked by ${cardLabel(by, 40)}`;
    const s = state.get(l.ruleId);
    return s === "gone" ? `${l.text} — no longer remembered` : s === "expired" ? `${l.text} — expired` : l.text;
  });
  return scrubSecrets([record.header, ...lines, record.footer].filter(Boolean).join("\n"));
}

function renderButtons(record: ListRecord, listId: string, state: Map<string, LineState>): MessageButton[] {
  return record.lines
    .filter((l) => record.revoked[l.ruleId] === undefined && state.get(l.ruleId) === "open")
    .map((l) => ({ label: l.label, payload: encodeButtonPayload(ALWAYS_BUTTON_KIND, `${listId}.${l.ruleId}`), style: "danger" as const }));
}

/** The list message as it reads now: each decision still open, revoked (by whom), gone or expired. */
async function currentList(store: Store, record: ListRecord, listId: string, now: number): Promise<OutboundText> {
  const state = new Map<string, LineState>();
  for (const line of record.lines) {
    const rule = await store.getAlwaysRule(line.ruleId);
    state.set(line.ruleId, !rule ? "gone" : rule.expiresAt !== undefined && rule.expiresAt <= now ? "expired" : "open");
  }
  return { text: renderText(record, state), plain: true, kind: "reply", buttons: renderButtons(record, listId, state) };
}

/** A Revoke button's click: checks who clicked, revokes the decision, and gives the list's new text. */
export async function revokeFromList(click: ButtonClick, data: string, deps: AlwaysListDeps): Promise<ButtonClickOutcome> {
  const now = (deps.now ?? Date.now)();
  const m = DATA.exec(data);
  if (!m) return { message: "That is not a valid Revoke button; nothing changed." };
  const [, listId, ruleId] = m as unknown as [string, string, string];
  const key = `${LIST_KEY}${listId}`;
  const record = readRecord(await deps.store.getValue(key));
  if (record && !record.lines.some((l) => l.ruleId === ruleId)) return { message: "That is not a valid Revoke button; nothing changed." };
  const refresh = async () => (record ? { replace: await currentList(deps.store, record, listId, now) } : {});
  const rule = await deps.store.getAlwaysRule(ruleId);
  if (!rule) return { message: "That decision is no longer remembered; nothing to revoke.", ...(await refresh()) };

  const person = parseAlwaysScope(rule.scope)?.person;
  const covered = person === undefined ? record !== undefined : person === `${click.channel}:${click.actor.id}`;
  const approver = (deps.approval.approvers[click.channel] ?? []).includes(click.actor.id);
  const actor = { actorId: click.actor.id, actorName: click.actor.name, channel: click.channel, tool: rule.tool, source: "button", detail: rule.scope };
  if (!covered && !approver) {
    await deps.store.appendAudit({ at: now, kind: "always.revoke_refused", ...actor, outcome: "not-allowed" });
    if (person === undefined) return { message: "This list is too old to revoke from; only an approver may revoke this decision now. Send /always for a fresh list; nothing changed." };
    const whom = rule.personName ?? person.slice(person.indexOf(":") + 1);
    return { message: `Only ${cardLabel(whom, 40)} (whom it covers) or an approver may revoke this decision; nothing changed.` };
  }
  const removed = await deps.store.revokeAlways(ruleId);
  if (!removed) return { message: "Someone revoked that decision just now; nothing else to do.", ...(await refresh()) };
  await deps.store.appendAudit({ at: now, kind: "always.revoked", ...actor, outcome: "revoked" });
  if (!record) return { message: `Revoked: ${cardLabel(rule.tool, 60)} will ask again.` };
  record.revoked[ruleId] = click.actor.name ?? click.actor.id;
  await deps.store.setValue(key, JSON.stringify(record));
  return refresh();
}
