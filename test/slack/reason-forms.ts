/**
 * The Slack side of the "Deny with reason…" contract: a click on the card's button opens a modal
 * in the emulator (views.open with the click's trigger_id), and the person submits it there.
 */
import type { ReasonForm, ReasonHarness } from "../contract/deny-reason-contract.ts";
import type { SlackHarness } from "./harness.ts";

/** The harness, able to open and submit reason modals as a person. */
export function withSlackReasonForms(h: SlackHarness): SlackHarness & ReasonHarness {
  const world = h.emulator.world;
  return {
    ...h,
    async openReasonForm(card, payload, userId): Promise<ReasonForm> {
      const before = world.views.opened.length;
      await h.emulator.click(card.conversationId, card.id, userId, payload);
      const view = await world.waitFor(() => world.views.opened.slice(before).find((v) => v.user === userId), 3000);
      if (!view) throw new Error(`no modal opened for ${userId}; ephemerals: ${JSON.stringify(world.ephemerals)}`);
      return {
        async submit(reason) {
          const since = Date.now();
          const { view: after } = await h.emulator.submitView(view.id, { [view.inputs[0]!.actionId]: reason });
          if (after.unanswered) throw new Error("the app did not acknowledge the modal submission within 3 s");
          if (after.errors) return { shownToClicker: Object.values(after.errors).join("\n") };
          // A decision slower than the ack budget is told ephemerally after the modal closed.
          const late = await world.waitFor(() => world.ephemerals.find((e) => e.user === userId && e.at >= since), 300);
          return late ? { shownToClicker: late.text } : {};
        },
      };
    },
    formsShown: (userId) => world.views.opened.filter((v) => v.user === userId).length,
  };
}
