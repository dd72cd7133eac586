/**
 * Where an "Always" answer is remembered. By default it covers only the person whose call was
 * answered: in a group chat without threads the session is the whole chat, and one member's
 * "Always" must not run another member's calls without a card. `approval.alwaysCoversOthers`
 * widens a session or conversation scope to everyone in it, for teams that want that explicitly.
 */
import type { ApprovalConfig } from "./schema.ts";

/** The call an "Always" is remembered for or looked up for. */
export interface AlwaysSubject {
  channel: string;
  senderId: string;
  conversationId: string;
  /** `<channel>:<conversation>[:<thread>]`. */
  sessionKey: string;
}

/** The store key an "Always" for `subject` is remembered under, per `approval.alwaysScope`. */
export function alwaysScopeKey(approval: Pick<ApprovalConfig, "alwaysScope" | "alwaysCoversOthers">, subject: AlwaysSubject): string {
  const sender = `|sender:${subject.channel}:${subject.senderId}`;
  const own = approval.alwaysCoversOthers ? "" : sender;
  switch (approval.alwaysScope) {
    case "sender":
      return `sender:${subject.channel}:${subject.senderId}`;
    case "conversation":
      return `conversation:${subject.channel}:${subject.conversationId}${own}`;
    default:
      return `session:${subject.sessionKey}${own}`;
  }
}

/** How far an "Always" reaches under this config, in words (for `gatehouse explain` and the docs). */
export function describeAlwaysScope(approval: Pick<ApprovalConfig, "alwaysScope" | "alwaysCoversOthers">): string {
  if (approval.alwaysScope === "sender") return "the person who asked, in every conversation on that channel";
  const where = approval.alwaysScope === "conversation" ? "the whole conversation" : "that thread (or chat, where there are no threads)";
  return approval.alwaysCoversOthers ? `${where}, for everyone in it` : `${where}, for the person who asked only`;
}

/** A remembered decision's store key, taken apart: where it holds, and whose calls it covers. */
export interface AlwaysScopeParts {
  kind: "session" | "conversation" | "sender";
  /** The session key, `<channel>:<conversation>`, or `<channel>:<sender>` for a sender scope. */
  place: string;
  /** `<channel>:<senderId>` of the one person it covers; absent: everyone there. */
  person?: string;
}

/** Reads a key made by `alwaysScopeKey`; undefined for anything else. */
export function parseAlwaysScope(scope: string): AlwaysScopeParts | undefined {
  const m = /^(session|conversation|sender):(.+)$/.exec(scope);
  if (!m) return undefined;
  const kind = m[1] as AlwaysScopeParts["kind"];
  if (kind === "sender") return { kind, place: m[2]!, person: m[2]! };
  const at = m[2]!.indexOf("|sender:");
  if (at < 0) return { kind, place: m[2]! };
  return { kind, place: m[2]!.slice(0, at), person: m[2]!.slice(at + "|sender:".length) };
}
