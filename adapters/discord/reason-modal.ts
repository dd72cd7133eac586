/**
 * "Deny with reason…" on Discord: a click on the card's fourth button is answered with a modal
 * (interaction response type 9) holding one paragraph text input; the modal's custom_id is the
 * button's payload, so its submission (a MODAL_SUBMIT interaction) names the approval. The
 * submission becomes a `deny` with the typed reason and takes the same path as a click: answered
 * with a deferred update when the decision is taken (the card is edited by resolveApproval), and
 * with an ephemeral reply saying why otherwise. A modal cannot answer a modal submission, so a
 * refusal is never shown as another form.
 */
import { ComponentType, TextInputStyle, type ButtonInteraction, type ModalSubmitInteraction } from "discord.js";
import { cardLabel } from "../../src/approval/card.ts";
import { denialReason, MAX_DENIAL_REASON_CHARS } from "../../src/envelope.ts";

/** The text input's custom_id. */
export const REASON_INPUT_ID = "reason";
/** Discord's limits for a modal's title and a text input's label. */
const MAX_TITLE = 45;
const MAX_LABEL = 45;

/** The modal that asks for the reason; `payload` is the clicked button's custom_id. */
export function reasonModal(payload: string, tool: string | undefined) {
  const what = tool ? cardLabel(tool, MAX_LABEL - "Why deny ?".length) : "this request";
  return {
    custom_id: payload,
    title: "Deny with reason".slice(0, MAX_TITLE),
    components: [
      {
        type: ComponentType.ActionRow as const,
        components: [
          {
            type: ComponentType.TextInput as const,
            custom_id: REASON_INPUT_ID,
            style: TextInputStyle.Paragraph,
            label: `Why deny ${what}?`.slice(0, MAX_LABEL),
            placeholder: "The bot is told this reason, and the card shows it.",
            max_length: MAX_DENIAL_REASON_CHARS,
            required: true,
          },
        ],
      },
    ],
  };
}

/** Answers a "Deny with reason…" click with the modal. */
export async function showReasonModal(interaction: ButtonInteraction, tool: string | undefined): Promise<void> {
  await interaction.showModal(reasonModal(interaction.customId, tool));
}

/** The reason typed into a submitted modal, cleaned (undefined when left empty). */
export function submittedReason(interaction: ModalSubmitInteraction): string | undefined {
  const field = interaction.fields.fields.get(REASON_INPUT_ID);
  const value = field && "value" in field && typeof field.value === "string" ? field.value : undefined;
  return denialReason(value);
}
