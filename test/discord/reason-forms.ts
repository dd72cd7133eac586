/**
 * The Discord side of the "Deny with reason…" contract: a click on the card's button is answered
 * with a modal in the emulator, and the person submits it there (a MODAL_SUBMIT interaction).
 */
import type { ReasonForm, ReasonHarness } from "../contract/deny-reason-contract.ts";
import type { DiscordHarness } from "./harness.ts";

/** The harness, able to open and submit reason modals as a person. */
export function withDiscordReasonForms(h: DiscordHarness): DiscordHarness & ReasonHarness {
  const { emulator } = h;
  return {
    ...h,
    async openReasonForm(card, payload, userId): Promise<ReasonForm> {
      const before = emulator.state.modals.length;
      const click = await emulator.click({ channelId: card.threadId ?? card.conversationId, messageId: card.id, customId: payload, userId });
      await emulator.interactionSettled(click);
      const modal = emulator.state.modals.slice(before).find((m) => m.userId === userId);
      if (!modal) throw new Error(`no modal shown to ${userId}; the click got ${JSON.stringify(click.responses)}`);
      return {
        async submit(reason) {
          const input = modal.body.components[0]!.components[0]!;
          const submitted = await emulator.submitModal(modal, { [input.custom_id]: reason });
          await emulator.interactionSettled(submitted);
          if (!submitted.acknowledged) throw new Error("the bot did not answer the modal submission");
          const shown = submitted.responses.filter((r) => r.ephemeral && r.content).map((r) => r.content!);
          return shown.length ? { shownToClicker: shown.join("\n") } : {};
        },
      };
    },
    formsShown: (userId) => emulator.state.modals.filter((m) => m.userId === userId).length,
  };
}
