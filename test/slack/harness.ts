/**
 * The Slack side of the channel contract suite: the real adapter (Bolt over Socket Mode)
 * against the Slack emulator, driven as a person in Slack would drive it.
 */
import type { ChannelHarness, SeenMessage } from "../contract/harness.ts";
import { createSlackAdapter, type SlackChannelAdapter } from "../../adapters/slack/adapter.ts";
import type { SlackAdapterOptions } from "../../adapters/slack/options.ts";
import { blocksText, buttonsOf, startSlackEmulator, type EmulatedMessage, type SlackEmulator, type SlackEmulatorOptions } from "../emulators/slack/index.ts";

/** The general channel every group message goes to. */
export const GENERAL = "C0GENERAL";
/** The user who speaks unless told otherwise. */
export const ALICE = "U0ALICE";

export interface SlackHarness extends ChannelHarness {
  adapter: SlackChannelAdapter;
  emulator: SlackEmulator;
}

/** What a person sees of a message: entities decoded, cards flattened. */
export function seen(m: EmulatedMessage): SeenMessage {
  const raw = m.blocks?.length ? blocksText(m.blocks) : m.text;
  return {
    id: m.ts,
    text: raw.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"),
    buttons: buttonsOf(m.blocks).map((b) => ({ label: b.label, payload: b.value })),
    conversationId: m.channel,
    threadId: m.threadTs,
  };
}

/** Starts an emulator and builds a Socket Mode adapter against it (not started). */
export async function createSlackHarness(options: { emulator?: SlackEmulatorOptions; adapter?: Partial<SlackAdapterOptions> } = {}): Promise<SlackHarness> {
  const emulator = await startSlackEmulator(options.emulator);
  const adapter = createSlackAdapter({
    botToken: emulator.botToken,
    appToken: emulator.appToken,
    apiUrl: emulator.apiUrl,
    socketPingTimeoutMs: 200,
    ...options.adapter,
  });
  return {
    adapter,
    emulator,
    async userSays(text, o = {}) {
      const user = o.userId ?? ALICE;
      if (o.userName && !emulator.world.users.has(user)) emulator.world.users.set(user, { id: user, name: o.userName });
      const channel = o.dm ? `D${user}` : GENERAL;
      emulator.world.channels.add(channel);
      const mention = !o.dm && (o.mention ?? true);
      await emulator.waitForSocket(5000);
      const { message } = await emulator.userPosts({ user, channel, text: mention ? `<@${emulator.botUserId}> ${text}` : text, threadTs: o.threadId });
      return { messageId: message.ts, conversationId: channel, threadId: message.threadTs ?? message.ts };
    },
    async botMessages(conversationId, threadId) {
      return emulator.messagesIn(conversationId, threadId).filter((m) => m.user === emulator.botUserId).map(seen);
    },
    async click(message, payload, userId) {
      // Only what this click showed: ephemerals posted before it (even in the same millisecond) are not its answer.
      const earlier = emulator.world.ephemerals.length;
      const before = emulator.world.findMessage(message.conversationId, message.id);
      const blocksBefore = JSON.stringify(before?.blocks);
      await emulator.click(message.conversationId, message.id, userId, payload, { actionId: "gatehouse_approval:forged" });
      const shown = await emulator.world.waitFor(() => {
        const eph = emulator.world.ephemerals.slice(earlier).find((e) => e.user === userId);
        if (eph) return { shownToClicker: eph.text };
        const now = emulator.world.findMessage(message.conversationId, message.id);
        return JSON.stringify(now?.blocks) !== blocksBefore ? {} : undefined;
      }, 2000);
      return shown ?? {};
    },
    async redeliverLast() {
      await emulator.redeliverLast();
    },
    async close() {
      await adapter.stop();
      await emulator.close();
    },
  };
}
