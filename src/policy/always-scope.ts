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
