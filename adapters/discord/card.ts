/**
 * The approval card as a Discord message: the card text and one row of buttons
 * (Approve · Always · Deny) whose custom_id is exactly the card's payload; and the
 * decided card, with the decision in place of the buttons.
 */
import { ButtonStyle, ComponentType } from "discord.js";
import type { ApprovalCard, ApprovalResolution } from "../../src/approval/card.ts";
import type { ApprovalChoice } from "../../src/envelope.ts";
import { MessageRejectedError } from "../../src/ports.ts";

/** Discord's custom_id limit. */
export const MAX_CUSTOM_ID = 100;

const BUTTONS: Array<{ choice: ApprovalChoice; label: string; style: ButtonStyle }> = [
  { choice: "approve", label: "Approve", style: ButtonStyle.Success },
  { choice: "always", label: "Always", style: ButtonStyle.Primary },
  { choice: "deny", label: "Deny", style: ButtonStyle.Danger },
];

function cardLines(card: ApprovalCard): string[] {
  const who = card.requester.name ?? card.requester.id;
  const expires = Math.floor(card.expiresAt / 1000);
  return [
    `🔐 **Approval needed:** \`${card.tool}\``,
    ...(card.argsSummary ? [`Arguments: ${card.argsSummary.replace(/`/g, "ʼ")}`] : []),
    `Requested by ${who} · may approve: ${card.approvers.join(", ")} · expires <t:${expires}:R>`,
  ];
}

/** The message body for an open card. Throws MessageRejectedError when a payload would not fit. */
export function openCardBody(card: ApprovalCard) {
  for (const { choice } of BUTTONS) {
    if (card.buttons[choice].length > MAX_CUSTOM_ID) {
      throw new MessageRejectedError("other", `approval button payload longer than ${MAX_CUSTOM_ID} characters`);
    }
  }
  return {
    content: cardLines(card).join("\n").slice(0, 2000),
    components: [
      {
        type: ComponentType.ActionRow,
        components: BUTTONS.map(({ choice, label, style }) => ({ type: ComponentType.Button, style, label, custom_id: card.buttons[choice] })),
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

/** The message body for a decided card: its first line, the decision, and no buttons. */
export function resolvedCardBody(card: ApprovalCard, resolution: ApprovalResolution) {
  const title = `🔐 Approval for \`${card.tool}\``;
  const args = card.argsSummary ? `\nArguments: ${card.argsSummary.replace(/`/g, "ʼ")}` : "";
  return {
    content: `${title}${args}\n${resolution.text}`.slice(0, 2000),
    components: [],
    allowed_mentions: { parse: [] },
  };
}
