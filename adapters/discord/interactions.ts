/**
 * Button clicks, reason modal submissions and slash commands. A click is answered once the sink has
 * decided — inside Discord's 3-second window: "accepted" → deferUpdate (the card is edited later by
 * resolveApproval); anything else → an ephemeral reply only the clicker sees. If the sink is
 * slow, the click is deferred before the window closes and the answer follows as an ephemeral
 * follow-up. "Deny with reason…" is answered with a modal (reason-modal.ts), and its submission is
 * answered like a click. Nothing here may throw into discord.js.
 */
import { MessageFlags, type ButtonInteraction, type ChatInputCommandInteraction, type Interaction, type ModalSubmitInteraction } from "discord.js";
import type { Logger } from "pino";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import { decodeButtonPayload, parseEnvelope, type ApprovalClick, type ApprovalClickOutcome, type ChannelCapabilities } from "../../src/envelope.ts";
import type { LruMap } from "../../src/lru-map.ts";
import type { InboundSink } from "../../src/ports.ts";
import { SLASH_COMMANDS } from "./commands.ts";
import { handleMessageButtonClick } from "./message-buttons.ts";
import { notServed } from "./inbound.ts";
import { showReasonModal, submittedReason } from "./reason-modal.ts";

export interface InteractionContext {
  sink: InboundSink;
  log: Logger;
  capabilities: ChannelCapabilities;
  account?: string;
  /** Defer a click this long after it arrived if the sink has not answered yet. */
  ackBudgetMs: number;
  /** The tools of the cards posted (approval id → tool), for the reason modal's wording. */
  cardTools?: LruMap<string, string>;
  /** The servers and channels served (absent: all), as for messages; a slash command elsewhere is refused. */
  allowedGuilds?: string[];
  allowedChannels?: string[];
}

const NOT_OUR_BUTTON = "That is not a valid button.";
const CLICK_FAILED = "Something went wrong handling that click. Please try again.";

/** Entry point for discord.js's interactionCreate event. */
export async function handleInteraction(interaction: Interaction, ctx: InteractionContext): Promise<void> {
  try {
    if (interaction.isButton() && decodeButtonPayload(interaction.customId)) await handleMessageButtonClick(interaction, ctx);
    else if (interaction.isButton()) await handleClick(interaction, ctx);
    else if (interaction.isModalSubmit()) await handleReasonSubmission(interaction, ctx);
    else if (interaction.isChatInputCommand()) await handleSlashCommand(interaction, ctx);
    else ctx.log.debug({ type: interaction.type }, "discord: ignored an interaction type");
  } catch (err) {
    ctx.log.warn({ err: String(err), interactionId: interaction.id }, "discord: interaction handling failed");
  }
}

function ephemeral(content: string) {
  return { content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } } as const;
}

async function handleClick(interaction: ButtonInteraction, ctx: InteractionContext): Promise<void> {
  const decoded = decodeApprovalPayload(interaction.customId);
  if (!decoded) {
    ctx.log.warn({ customId: interaction.customId.slice(0, 100) }, "discord: click on a button that is not an approval button");
    await interaction.reply(ephemeral(NOT_OUR_BUTTON));
    return;
  }
  if (decoded.askReason) {
    await showReasonModal(interaction, ctx.cardTools?.get(decoded.approvalId));
    return;
  }
  const click = {
    channel: "discord",
    approvalId: decoded.approvalId,
    choice: decoded.choice,
    actor: actorOf(interaction),
    messageId: interaction.message.id,
    conversationId: interaction.channelId,
  };
  await decideAndAnswer(interaction, click, ctx);
}

/** A submitted reason modal: a `deny` with the reason, answered like a click. */
async function handleReasonSubmission(interaction: ModalSubmitInteraction, ctx: InteractionContext): Promise<void> {
  const decoded = decodeApprovalPayload(interaction.customId);
  if (!decoded?.askReason) {
    ctx.log.warn({ customId: interaction.customId.slice(0, 100) }, "discord: a modal submission that is not a reason for a denial");
    await interaction.reply(ephemeral(NOT_OUR_BUTTON));
    return;
  }
  const reason = submittedReason(interaction);
  const click: ApprovalClick = {
    channel: "discord",
    approvalId: decoded.approvalId,
    choice: "deny",
    actor: actorOf(interaction),
    ...(interaction.message ? { messageId: interaction.message.id } : {}),
    ...(interaction.channelId ? { conversationId: interaction.channelId } : {}),
    ...(reason ? { reason } : {}),
  };
  await decideAndAnswer(interaction, click, ctx);
}

function actorOf(interaction: ButtonInteraction | ModalSubmitInteraction) {
  const user = interaction.user;
  return { id: user.id, name: interaction.inCachedGuild() ? interaction.member.displayName : (user.globalName ?? user.username), isBot: user.bot };
}

/**
 * Hands a click (or a submitted reason) to the sink and answers the interaction inside Discord's
 * window: a deferred update when accepted and the interaction is on the card's message, an ephemeral
 * reply otherwise.
 */
async function decideAndAnswer(interaction: ButtonInteraction | ModalSubmitInteraction, click: ApprovalClick, ctx: InteractionContext): Promise<void> {
  const onCard = interaction.isButton() || (interaction.isModalSubmit() && interaction.isFromMessage());

  // Defer before Discord's deadline when the sink is slow, so the click never shows "failed".
  let deferred: Promise<unknown> | undefined;
  const elapsed = Date.now() - interaction.createdTimestamp;
  const timer = setTimeout(() => {
    const defer = onCard ? interaction.deferUpdate() : interaction.deferReply({ flags: MessageFlags.Ephemeral });
    deferred = defer.catch((err: unknown) => ctx.log.warn({ err: String(err) }, "discord: could not defer a click"));
  }, Math.max(0, ctx.ackBudgetMs - Math.max(0, elapsed)));

  let outcome: ApprovalClickOutcome;
  try {
    outcome = await ctx.sink.approvalClick(click);
  } catch (err) {
    ctx.log.warn({ err: String(err), approvalId: click.approvalId }, "discord: approval click failed in the sink");
    outcome = { status: "unknown", message: CLICK_FAILED };
  } finally {
    clearTimeout(timer);
  }

  if (deferred) {
    await deferred;
    if (!onCard) await interaction.editReply({ content: outcome.message, allowedMentions: { parse: [] } });
    else if (outcome.status !== "accepted") await interaction.followUp(ephemeral(outcome.message));
  } else if (outcome.status === "accepted" && onCard) {
    await interaction.deferUpdate();
  } else {
    await interaction.reply(ephemeral(outcome.message));
  }
}

async function handleSlashCommand(interaction: ChatInputCommandInteraction, ctx: InteractionContext): Promise<void> {
  const command = SLASH_COMMANDS.find((c) => c.name === interaction.commandName);
  if (!command) {
    await interaction.reply(ephemeral(`Unknown command /${interaction.commandName}.`));
    return;
  }
  const channel = interaction.channel;
  const inThread = channel?.isThread() ?? false;
  const isDm = !interaction.guildId;
  const threadParent = channel?.isThread() ? (channel.parentId ?? undefined) : undefined;
  if (!isDm && notServed(ctx, interaction.guildId!, interaction.channelId, threadParent)) {
    await interaction.reply(ephemeral("I don't work in this channel; ask where I'm set up to answer."));
    return;
  }
  await interaction.reply(ephemeral(`/${command.name} received.`));
  const account = ctx.account ? { account: ctx.account } : {};
  const parentId = inThread && channel?.isThread() ? (channel.parentId ?? interaction.channelId) : interaction.channelId;
  await ctx.sink.message(
    parseEnvelope({
      id: interaction.id,
      channel: "discord",
      ...account,
      conversation: inThread
        ? { id: parentId, threadId: interaction.channelId, kind: "channel" }
        : { id: interaction.channelId, kind: isDm ? "dm" : "channel" },
      sender: { id: interaction.user.id, name: interaction.user.globalName ?? interaction.user.username, isBot: false },
      mentioned: true,
      text: `/${command.name}`,
      replyTo: { channel: "discord", ...account, conversationId: interaction.channelId, ...(inThread ? { threadId: interaction.channelId } : {}) },
      receivedAt: Date.now(),
      capabilities: ctx.capabilities,
    }),
  );
}
