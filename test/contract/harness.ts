/**
 * What the channel contract suite needs from a platform: a way to act as a user on the
 * platform's emulator and to read what the bot posted, as a person would see it.
 * Each adapter's tests provide one (test/<platform>/harness.ts).
 */
import type { ChannelAdapter } from "../../src/ports.ts";

export interface SeenButton {
  label: string;
  /** The raw payload the platform sends back on click (Slack value, Discord custom_id, Telegram callback_data). */
  payload: string;
}

export interface SeenMessage {
  id: string;
  /** The text as shown (for cards: the card's text content, flattened). */
  text: string;
  buttons: SeenButton[];
  /** Where it was posted. */
  conversationId: string;
  threadId?: string;
}

export interface UserMessageOptions {
  userId?: string;
  userName?: string;
  /** Post into an existing thread (Slack thread_ts, Discord thread channel id, Telegram topic id). */
  threadId?: string;
  /** A direct message to the bot instead of a group/channel message. */
  dm?: boolean;
  /** Address the bot with a mention (default true for group messages). */
  mention?: boolean;
}

export interface PostedUserMessage {
  messageId: string;
  conversationId: string;
  /** The thread the bot is expected to answer in (Slack: the message ts for a top-level post). */
  threadId?: string;
}

export interface ChannelHarness {
  /** The adapter under test, already constructed against the emulator (not yet started). */
  adapter: ChannelAdapter;
  /** A user posts a message; resolves once the platform has handed it to the bot. */
  userSays(text: string, options?: UserMessageOptions): Promise<PostedUserMessage>;
  /** Every message the bot posted in a conversation (optionally one thread), oldest first, as currently shown. */
  botMessages(conversationId: string, threadId?: string): Promise<SeenMessage[]>;
  /** A user clicks a button; resolves with what the clicker alone was shown (ephemeral reply / alert), if anything. */
  click(message: SeenMessage, payload: string, userId: string): Promise<{ shownToClicker?: string }>;
  /** The platform delivers the last user message event again (a retry / redelivery). */
  redeliverLast(): Promise<void>;
  /** Stops the adapter and the emulator. */
  close(): Promise<void>;
}
