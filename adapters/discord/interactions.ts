/**
 * Button clicks and slash commands. A click is answered once the sink has decided — inside
 * Discord's 3-second window: "accepted" → deferUpdate (the card is edited later by
 * resolveApproval); anything else → an ephemeral reply only the clicker sees. If the sink is
 * slow, the click is deferred before the window closes and the answer follows as an ephemeral
 * follow-up. Nothing here may throw into discord.js.
 */
import { MessageFlags, type ButtonInteraction, type ChatInputCommandInteraction, type Interaction } from "discord.js";
import type { Logger } from "pino";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import { parseEnvelope, type ApprovalClickOutcome, type ChannelCapabilities } from "../../src/envelope.ts";
import type { InboundSink } from "../../src/ports.ts";
import { SLASH_COMMANDS } from "./commands.ts";

export interface InteractionContext {
  sink: InboundSink;
  log: Logger;
  capabilities: ChannelCapabilities;
  account?: string;
  /** Defer a click this long after it arrived if the sink has not answered yet. */
  ackBudgetMs: number;
}

const NOT_OUR_BUTTON = "That is not a valid button.";
const CLICK_FAILED = "Something went wrong handling that click. Please try again.";

/** Entry point for discord.js's interactionCreate event. */
export async function handleInteraction(interaction: Interaction, ctx: InteractionContext): Promise<void> {
  try {
    if (interaction.isButton()) await handleClick(interaction, ctx);
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
  const user = interaction.user;
  const click = {
    channel: "discord",
    approvalId: decoded.approvalId,
    choice: decoded.choice,
    actor: { id: user.id, name: interaction.inCachedGuild() ? interaction.member.displayName : (user.globalName ?? user.username), isBot: user.bot },
    messageId: interaction.message.id,
    conversationId: interaction.channelId,
  };

  // Defer before Discord's deadline when the sink is slow, so the click never shows "failed".
  let deferred: Promise<unknown> | undefined;
  const elapsed = Date.now() - interaction.createdTimestamp;
  const timer = setTimeout(() => {
    deferred = interaction.deferUpdate().catch((err: unknown) => ctx.log.warn({ err: String(err) }, "discord: could not defer a click"));
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
    if (outcome.status !== "accepted") await interaction.followUp(ephemeral(outcome.message));
  } else if (outcome.status === "accepted") {
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
  await interaction.reply(ephemeral(`/${command.name} received.`));
  const channel = interaction.channel;
  const inThread = channel?.isThread() ?? false;
  const isDm = !interaction.guildId;
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
