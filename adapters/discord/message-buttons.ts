/**
 * Buttons under ordinary messages (not approval cards): action rows of at most five buttons whose
 * custom_id is the payload, and the click on one. The click is answered inside Discord's 3-second
 * window: with an update of the clicked message when the outcome replaces it, with an ephemeral
 * reply for the outcome's message; a slow sink gets a deferred update first, and the answer follows
 * as an edit of the message and an ephemeral follow-up. Nothing here may throw into discord.js.
 */
import { ButtonStyle, ComponentType, MessageFlags, type ButtonInteraction } from "discord.js";
import type { Logger } from "pino";
import type { InboundSink, MessageButton, OutboundText } from "../../src/ports.ts";
import { MessageRejectedError } from "../../src/ports.ts";
import { MAX_CONTENT, MAX_CUSTOM_ID } from "./card.ts";
import { toDiscordMarkdown } from "./markdown.ts";

const PER_ROW = 5;
const MAX_ROWS = 5;
const MAX_LABEL = 80;
const STYLES = { primary: ButtonStyle.Primary, danger: ButtonStyle.Danger } as const;

/** The action rows of `buttons`; throws MessageRejectedError when one would not fit Discord. */
export function buttonRows(buttons: MessageButton[]) {
  if (buttons.length > PER_ROW * MAX_ROWS) throw new MessageRejectedError("other", `more than ${PER_ROW * MAX_ROWS} buttons on one message`);
  const rows = [];
  for (let i = 0; i < buttons.length; i += PER_ROW) {
    rows.push({
      type: ComponentType.ActionRow,
      components: buttons.slice(i, i + PER_ROW).map((b) => {
        if (b.payload.length > MAX_CUSTOM_ID) throw new MessageRejectedError("other", `button payload longer than ${MAX_CUSTOM_ID} characters`);
        return {
          type: ComponentType.Button,
          style: b.style ? STYLES[b.style] : ButtonStyle.Secondary,
          label: b.label.length > MAX_LABEL ? `${b.label.slice(0, MAX_LABEL - 1)}…` : b.label,
          custom_id: b.payload,
        };
      }),
    });
  }
  return rows;
}

/** `components` for a message body: the rows when the message carries buttons (`[]` removes them), nothing otherwise. */
export function componentsOf(message: OutboundText): { components?: ReturnType<typeof buttonRows> } {
  return message.buttons ? { components: buttonRows(message.buttons) } : {};
}

export interface ButtonInteractionContext {
  sink: InboundSink;
  log: Logger;
  account?: string;
  /** Defer a click this long after it arrived if the sink has not answered yet. */
  ackBudgetMs: number;
}

const ephemeral = (content: string) => ({ content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } }) as const;

/** Handles a click on a message button (the caller checked its custom_id is one). */
export async function handleMessageButtonClick(interaction: ButtonInteraction, ctx: ButtonInteractionContext): Promise<void> {
  const buttonClick = ctx.sink.buttonClick?.bind(ctx.sink);
  if (!buttonClick) {
    await interaction.reply(ephemeral("This button does nothing here."));
    return;
  }
  const user = interaction.user;
  const click = {
    channel: "discord",
    ...(ctx.account ? { account: ctx.account } : {}),
    payload: interaction.customId,
    actor: { id: user.id, name: interaction.inCachedGuild() ? interaction.member.displayName : (user.globalName ?? user.username), isBot: user.bot },
    messageId: interaction.message.id,
    conversationId: interaction.channelId,
  };
  let deferred: Promise<unknown> | undefined;
  const elapsed = Date.now() - interaction.createdTimestamp;
  const timer = setTimeout(() => {
    deferred = interaction.deferUpdate().catch((err: unknown) => ctx.log.warn({ err: String(err) }, "discord: could not defer a button click"));
  }, Math.max(0, ctx.ackBudgetMs - Math.max(0, elapsed)));
  let outcome: Awaited<ReturnType<typeof buttonClick>>;
  try {
    outcome = await buttonClick(click);
  } catch (err) {
    ctx.log.warn({ err: String(err) }, "discord: button click failed in the sink");
    outcome = { message: "Something went wrong handling that click. Please try again." };
  } finally {
    clearTimeout(timer);
  }
  const replacement = outcome.replace
    ? {
        content: (outcome.replace.plain ? outcome.replace.text : toDiscordMarkdown(outcome.replace.text)).slice(0, MAX_CONTENT),
        components: buttonRows(outcome.replace.buttons ?? []),
        allowedMentions: { parse: [] },
      }
    : undefined;
  if (deferred) {
    await deferred;
    if (replacement) await interaction.editReply(replacement);
    if (outcome.message) await interaction.followUp(ephemeral(outcome.message));
  } else if (replacement) {
    await interaction.update(replacement);
    if (outcome.message) await interaction.followUp(ephemeral(outcome.message));
  } else if (outcome.message) {
    await interaction.reply(ephemeral(outcome.message));
  } else {
    await interaction.deferUpdate();
  }
}
