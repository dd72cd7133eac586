/**
 * The approval card as a Discord message: the card text and one row of buttons
 * (Approve · Always · Deny · Deny with reason…) whose custom_id is exactly the card's payload; and
 * the decided card, with the decision in place of the buttons.
 *
 * The arguments are shown as a code block, so no markdown in them (spoilers, strikethrough, masked
 * links) renders; backticks that could close the block early are kept apart by zero-width spaces,
 * which the card says. The card is cut in Discord's own unit (2,000 UTF-16 code units, markup
 * included) by shortening the arguments only: the "deny if unsure" warning and the requester and
 * approver line are always on it.
 */
import { ButtonStyle, ComponentType, MessageFlags } from "discord.js";
import { approverList, cardLabel, MAX_RESOLUTION_CHARS, type ApprovalCard, type ApprovalResolution, type CardButton } from "../../src/approval/card.ts";
import { BACKTICK_NOTE, fitCardArguments, separateBacktickRuns, type CardArguments } from "../../src/approval/summary.ts";
import { MessageRejectedError } from "../../src/ports.ts";

/** Discord's custom_id limit. */
export const MAX_CUSTOM_ID = 100;
/** Discord's message content limit, in UTF-16 code units (what `String.length` counts). */
export const MAX_CONTENT = 2000;

const BUTTONS: Array<{ choice: CardButton; label: string; style: ButtonStyle }> = [
  { choice: "approve", label: "Approve", style: ButtonStyle.Success },
  { choice: "always", label: "Always", style: ButtonStyle.Primary },
  { choice: "deny", label: "Deny", style: ButtonStyle.Danger },
  { choice: "denyWithReason", label: "Deny with reason…", style: ButtonStyle.Secondary },
];

/** Text from outside shown literally: every ASCII punctuation mark Discord could read as markup is backslash-escaped. */
export function escapeDiscordText(text: string): string {
  return text.replace(/[\\`*_~|[\]()<>#\-:.!@/+=>{}]/g, "\\$&");
}

function argumentLines(shown: CardArguments): string[] {
  const code = separateBacktickRuns(shown.args);
  return [
    "Arguments:",
    `\`\`\`\n${code.text}\n\`\`\``,
    ...(code.separated ? [BACKTICK_NOTE] : []),
    ...(shown.warning ? [`**${shown.warning}**`] : []),
  ];
}

/** The card's content: header, the arguments cut to fit, then `tail` (never cut). */
function fittedContent(card: ApprovalCard, header: string, tail: string[]): string {
  const render = (shown?: CardArguments) => [header, ...(shown ? argumentLines(shown) : []), ...tail].join("\n");
  if (!card.argsSummary) return render().slice(0, MAX_CONTENT);
  const shown = fitCardArguments(card.argsSummary, (candidate) => render(candidate).length <= MAX_CONTENT);
  return render(shown);
}

function toolName(card: ApprovalCard): string {
  return `**${escapeDiscordText(cardLabel(card.tool))}**`;
}

const URL_PART = /(https?:\/\/[^\s<>]+)/;

/** A card's note as inert text; links stay links (in <…>, so they show no preview). */
function noteText(note: string): string {
  return note
    .slice(0, 500)
    .split(URL_PART)
    .map((part, i) => (i % 2 ? `<${part}>` : escapeDiscordText(part)))
    .join("");
}

/** The message body for an open card. Throws MessageRejectedError when a payload would not fit. */
export function openCardBody(card: ApprovalCard) {
  for (const { choice } of BUTTONS) {
    if (card.buttons[choice].length > MAX_CUSTOM_ID) {
      throw new MessageRejectedError("other", `approval button payload longer than ${MAX_CUSTOM_ID} characters`);
    }
  }
  const who = escapeDiscordText(cardLabel(card.requester.name ?? card.requester.id));
  const expires = Math.floor(card.expiresAt / 1000);
  const tail = [`Requested by ${who} · may approve: ${escapeDiscordText(approverList(card.approvers))} · expires <t:${expires}:R>`];
  if (card.note) tail.push(noteText(card.note));
  return {
    content: fittedContent(card, `🔐 **Approval needed:** ${toolName(card)}`, tail),
    components: [
      {
        type: ComponentType.ActionRow,
        components: BUTTONS.map(({ choice, label, style }) => ({ type: ComponentType.Button, style, label, custom_id: card.buttons[choice] })),
      },
    ],
    allowed_mentions: { parse: [] },
    flags: MessageFlags.SuppressEmbeds,
  };
}

/** The message body for a decided card: its first line, the arguments, the decision, and no buttons. */
export function resolvedCardBody(card: ApprovalCard, resolution: ApprovalResolution) {
  const decision = escapeDiscordText(cardLabel(resolution.text, MAX_RESOLUTION_CHARS));
  return {
    content: fittedContent(card, `🔐 Approval for ${toolName(card)}`, [decision]),
    components: [],
    allowed_mentions: { parse: [] },
    flags: MessageFlags.SuppressEmbeds,
  };
}
