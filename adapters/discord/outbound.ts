/**
 * The Discord outbound port: one REST call per message through discord.js's REST client
 * (which keeps Discord's per-route buckets). Replies go to `target.conversationId` — the
 * thread's channel id in servers (the thread is started here on first use; where the bot may not
 * start threads, the channel itself, as replies to the user's message), the DM channel otherwise. Mentions in the bot's text never ping anyone.
 */
import { MessageFlags, Routes, type REST } from "discord.js";
import type { ReplyTarget } from "../../src/envelope.ts";
import type { OutboundPort, OutboundText, SentMessage } from "../../src/ports.ts";
import type { ApprovalCard, ApprovalResolution } from "../../src/approval/card.ts";
import { LruMap } from "../../src/lru-map.ts";
import { openCardBody, resolvedCardBody } from "./card.ts";
import { portCall } from "./errors.ts";
import { toDiscordMarkdown } from "./markdown.ts";
import { componentsOf } from "./message-buttons.ts";
import { escapeDiscordText } from "./card.ts";
import type { Place, ThreadTracker } from "./threads.ts";

const NO_PINGS = { parse: [] as string[] };

/** Literal text is escaped: Discord reads Markdown in every message (a masked link in outside text must stay text). */
function content(message: OutboundText): string {
  if (message.literal) return escapeDiscordText(message.text);
  return message.plain ? message.text : toDiscordMarkdown(message.text);
}

/**
 * Builds the port; `rest` is looked up per call because the client exists only after start. Link
 * embeds are suppressed unless `linkPreviews` is on: Discord would otherwise fetch any URL the model wrote.
 */
export function createDiscordPort(
  rest: () => REST,
  threads: ThreadTracker,
  options: { linkPreviews?: boolean; /** Told when a channel lets the bot post but not start threads. */ onNoThreads?: (channelId: string) => void } = {},
): OutboundPort {
  const flags = options.linkPreviews ? {} : { flags: MessageFlags.SuppressEmbeds };
  /** The server of each channel a link was made for ("@me" for a DM), so a link costs one lookup per channel. */
  const guilds = new LruMap<string, string>({ max: 10_000 });
  async function placeFor(target: ReplyTarget): Promise<Place> {
    const place = await portCall(() => threads.ensure(rest(), target.conversationId, options.onNoThreads));
    if (target.threadId === place.channelId) threads.markJoined(place.channelId);
    return place;
  }
  const channelFor = async (target: ReplyTarget): Promise<string> => (await placeFor(target)).channelId;
  /** A new message where no thread could be started answers the message that addressed the bot. */
  const replyingTo = (place: Place) => (place.replyTo ? { message_reference: { message_id: place.replyTo, fail_if_not_exists: false } } : {});

  return {
    async send(target: ReplyTarget, message: OutboundText): Promise<SentMessage> {
      const place = await placeFor(target);
      const posted = (await portCall(() =>
        rest().post(Routes.channelMessages(place.channelId), { body: { content: content(message), allowed_mentions: NO_PINGS, ...flags, ...componentsOf(message), ...replyingTo(place) } }),
      )) as { id: string };
      return { id: posted.id };
    },

    async edit(target: ReplyTarget, messageId: string, message: OutboundText): Promise<void> {
      const channelId = await channelFor(target);
      await portCall(() => rest().patch(Routes.channelMessage(channelId, messageId), { body: { content: content(message), allowed_mentions: NO_PINGS, ...flags, ...componentsOf(message) } }));
    },

    async requestApproval(target: ReplyTarget, card: ApprovalCard): Promise<SentMessage> {
      const place = await placeFor(target);
      const body = { ...openCardBody(card), ...replyingTo(place) };
      const posted = (await portCall(() => rest().post(Routes.channelMessages(place.channelId), { body }))) as { id: string };
      return { id: posted.id };
    },

    async resolveApproval(target: ReplyTarget, messageId: string, card: ApprovalCard, resolution: ApprovalResolution): Promise<void> {
      const channelId = await channelFor(target);
      await portCall(() => rest().patch(Routes.channelMessage(channelId, messageId), { body: resolvedCardBody(card, resolution) }));
    },

    async permalink(target: ReplyTarget, messageId: string): Promise<string | undefined> {
      const channelId = await channelFor(target);
      let guild = guilds.get(channelId);
      if (!guild) {
        const channel = (await portCall(() => rest().get(Routes.channel(channelId)))) as { guild_id?: string };
        guild = channel.guild_id ?? "@me";
        guilds.set(channelId, guild);
      }
      return `https://discord.com/channels/${guild}/${channelId}/${messageId}`;
    },

    async typing(target: ReplyTarget): Promise<void> {
      const channelId = await channelFor(target);
      await portCall(() => rest().post(Routes.channelTyping(channelId)));
    },
  };
}
