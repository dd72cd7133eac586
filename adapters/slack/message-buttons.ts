/**
 * Buttons under ordinary messages (not approval cards): the message as Block Kit — its text in
 * section blocks, its buttons in one actions block — and the click on one, handed to the sink as a
 * ButtonClick once Bolt has acknowledged it. The outcome's message is shown only to the clicker
 * (ephemeral); its replacement edits the clicked message. Nothing a click carries can crash the adapter.
 */
import { z } from "zod";
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { decodeButtonPayload, type ReplyTarget } from "../../src/envelope.ts";
import type { InboundSink, MessageButton, OutboundPort } from "../../src/ports.ts";

/** Prefix of every message button's action_id. */
export const BUTTON_ACTION_PREFIX = "gatehouse_button";

/** Slack's limits: a section's text, a button's label, an actions block's elements. */
const MAX_SECTION_TEXT = 3000;
const MAX_LABEL = 75;
const MAX_ELEMENTS = 25;

type Block = { type: string; [field: string]: unknown };

/** Splits mrkdwn into section texts of at most Slack's 3,000 characters, at line ends where it can. */
function sections(text: string): string[] {
  const out: string[] = [];
  let rest = text || " ";
  while (rest.length > MAX_SECTION_TEXT) {
    const cut = rest.lastIndexOf("\n", MAX_SECTION_TEXT);
    const at = cut > 0 ? cut : MAX_SECTION_TEXT;
    out.push(rest.slice(0, at));
    rest = rest.slice(at).replace(/^\n/, "");
  }
  out.push(rest);
  return out;
}

/** The blocks of a message with buttons: its (already mrkdwn) text, then the buttons, if any. */
export function messageBlocks(mrkdwn: string, buttons: MessageButton[]): Block[] {
  const blocks: Block[] = sections(mrkdwn).map((text) => ({ type: "section", text: { type: "mrkdwn", text } }));
  if (!buttons.length) return blocks;
  blocks.push({
    type: "actions",
    elements: buttons.slice(0, MAX_ELEMENTS).map((b, i) => ({
      type: "button",
      action_id: `${BUTTON_ACTION_PREFIX}:${i}`,
      text: { type: "plain_text", text: b.label.length > MAX_LABEL ? `${b.label.slice(0, MAX_LABEL - 1)}…` : b.label },
      value: b.payload,
      ...(b.style ? { style: b.style } : {}),
    })),
  });
  return blocks;
}

const ButtonActionSchema = z.object({
  user: z.object({ id: z.string().min(1), name: z.string().optional(), username: z.string().optional() }),
  channel: z.object({ id: z.string().min(1) }).optional(),
  container: z.object({ message_ts: z.string().optional(), channel_id: z.string().optional(), thread_ts: z.string().optional() }).partial().optional(),
  message: z.object({ ts: z.string().optional(), thread_ts: z.string().optional() }).partial().optional(),
  actions: z.array(z.object({ value: z.string().optional() })).min(1),
});

export interface ButtonClickDeps {
  channel: string;
  account?: string;
  client: WebClient;
  port: OutboundPort;
  log: Logger;
  sink: () => InboundSink | undefined;
}

/**
 * Handles a block_actions body (already acknowledged) when its button is a message button; false
 * when it is not (an approval card's, or a forged one), for the approval click handler to take.
 */
export async function handleMessageButtonClick(body: unknown, deps: ButtonClickDeps): Promise<boolean> {
  const parsed = ButtonActionSchema.safeParse(body);
  if (!parsed.success || !decodeButtonPayload(parsed.data.actions[0]!.value ?? "")) return false;
  const b = parsed.data;
  const conversationId = b.channel?.id ?? b.container?.channel_id;
  const messageTs = b.container?.message_ts ?? b.message?.ts;
  const threadTs = b.message?.thread_ts ?? b.container?.thread_ts;
  const tellClicker = async (text: string) => {
    try {
      await deps.client.chat.postEphemeral({ channel: conversationId!, user: b.user.id, thread_ts: threadTs ?? messageTs, text });
    } catch (err) {
      deps.log.warn({ err: String(err) }, "could not show the clicker an ephemeral reply");
    }
  };
  if (!conversationId || !messageTs) {
    deps.log.warn({ user: b.user.id }, "message button click without its message");
    return true;
  }
  const sink = deps.sink();
  if (!sink?.buttonClick) {
    await tellClicker("The bot is not ready yet; try again in a moment.");
    return true;
  }
  try {
    const outcome = await sink.buttonClick({
      channel: deps.channel,
      ...(deps.account ? { account: deps.account } : {}),
      payload: b.actions[0]!.value!,
      actor: { id: b.user.id, name: b.user.name ?? b.user.username, isBot: false },
      messageId: messageTs,
      conversationId,
      ...(threadTs ? { threadId: threadTs } : {}),
    });
    if (outcome.replace) {
      const target: ReplyTarget = { channel: deps.channel, account: deps.account, conversationId, threadId: threadTs };
      await deps.port.edit!(target, messageTs, { ...outcome.replace, buttons: outcome.replace.buttons ?? [] });
    }
    if (outcome.message) await tellClicker(outcome.message);
  } catch (err) {
    deps.log.error({ err: String(err) }, "message button click failed");
    await tellClicker("Something went wrong handling that click; please try again.");
  }
  return true;
}
