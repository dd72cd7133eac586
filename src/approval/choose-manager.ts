/**
 * Which approval manager a channel's turns get: from what the adapter can do (a prompt, or cards
 * with buttons), never from its name. Cards go through the channel's delivery queue so they keep
 * their place in the thread.
 */
import type { ChannelAdapter } from "../ports.ts";
import type { Delivery } from "../delivery/delivery.ts";
import { consoleCardPoster } from "./console-approvals.ts";
import { createNonInteractiveApprovals } from "./non-interactive.ts";
import type { CardPoster, PendingApprovals } from "./pending-approvals.ts";
import type { ApprovalManager } from "./types.ts";

/** Which approval manager a channel's turns get: from what the adapter can do, never its name. */
export function approvalManagerFor(
  adapter: ChannelAdapter,
  approvals: PendingApprovals,
  delivery: Delivery,
): ApprovalManager {
  if (adapter.prompt) {
    const poster = consoleCardPoster({
      prompt: adapter.prompt.bind(adapter),
      say: (target, text) => delivery.send(target, text, "notice"),
      decide: (click) => approvals.decide(click),
    });
    return approvals.managerFor(adapter.channel, poster, "console");
  }
  const { requestApproval, resolveApproval, isApprover } = adapter.port;
  if (adapter.capabilities.inlineApproval && requestApproval && resolveApproval) {
    const poster: CardPoster = {
      post: (target, card) => delivery.run(target, () => requestApproval.call(adapter.port, target, card)).then((m) => m.id),
      resolve: (target, messageId, card, resolution) =>
        delivery.run(target, () => resolveApproval.call(adapter.port, target, messageId, card, resolution)),
      say: async (target, text) => {
        await delivery.send(target, text, "notice");
      },
      permalink: (target, messageId) => delivery.permalink(target, messageId),
      ...(isApprover ? { isApprover: isApprover.bind(adapter.port) } : {}),
    };
    return approvals.managerFor(adapter.channel, poster);
  }
  return createNonInteractiveApprovals();
}
