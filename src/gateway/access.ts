/**
 * Access control at the door: per-channel allowlists of users and conversations (`*` = anyone,
 * empty = no one), the DM policy, and mention gating in groups. A refused sender is told once
 * per cooldown period; a group message that does not address the bot is simply not for it.
 */
import type { AccessConfig } from "../config/schema.ts";
import type { IngressEnvelope } from "../envelope.ts";
import { LruMap } from "../lru-map.ts";

export type AccessDecision =
  | { verdict: "allowed" }
  | { verdict: "not-addressed" }
  | { verdict: "refused"; reason: string; tell: boolean };

const listed = (list: string[], id: string) => list.includes("*") || list.includes(id);

export const REFUSAL_TEXT = "Sorry, I can't take requests from you here. Ask an admin of this bot to add you.";

export class AccessControl {
  /** When each refused sender was last told; the least recently told are forgotten first. */
  private readonly lastTold = new LruMap<string, number>({ max: 10_000 });

  /**
   * Decides whether an envelope is handled. `knownThread`: the thread already has a conversation
   * with the bot in the store (the adapter may have forgotten it across a restart).
   */
  check(env: IngressEnvelope, access: AccessConfig, now = Date.now(), knownThread = false): AccessDecision {
    const inGroup = env.conversation.kind !== "dm";
    if (inGroup && access.mentionGate && !env.mentioned && !env.repliedToBot && !env.inBotThread && !knownThread) {
      return { verdict: "not-addressed" };
    }
    let reason: string | undefined;
    if (!inGroup && access.dm === "off") reason = "direct messages are off";
    else if (!listed(access.users, env.sender.id)) reason = `sender ${env.sender.id} is not in the allowlist`;
    else if (!listed(access.conversations, env.conversation.id)) reason = `conversation ${env.conversation.id} is not in the allowlist`;
    if (!reason) return { verdict: "allowed" };
    const key = `${env.channel}:${env.sender.id}`;
    const last = this.lastTold.get(key);
    const tell = last === undefined || now - last >= access.refusalCooldownMs;
    if (tell) this.lastTold.set(key, now);
    return { verdict: "refused", reason, tell };
  }
}
