/**
 * The commands every channel understands — /stop, /status, /new, /compact, /help — answered from the
 * control lane, never behind the turn they control. Each returns the reply text.
 */
import type { BotCommand, IngressEnvelope } from "../envelope.ts";
import { askForCompaction, contextStatus, forgetContext } from "../engine/compaction.ts";
import type { Store } from "../store/store.ts";
import type { RunningTurn, SessionLanes } from "./lanes.ts";

/** Store key of a thread whose conversation /new started afresh: it has no history, yet is the bot's. */
export const FRESH_THREAD = "thread.fresh:";

export interface CommandDeps {
  lanes: SessionLanes;
  store: Store;
  onSessionReset?: (sessionKey: string) => Promise<void>;
  /** With replicas: stops a session's turn that runs (or is parked) outside this process; undefined when there is none. */
  stopElsewhere?: (sessionKey: string) => Promise<string | undefined>;
}

/** Carries out a command for the session of `env` and says what happened (`/always` has its own answer, always-list.ts). */
export async function answerCommand(command: Exclude<BotCommand, "always">, env: IngressEnvelope, sessionKey: string, deps: CommandDeps): Promise<string> {
  if (command === "help") return helpText(env);
  const running = deps.lanes.running(sessionKey);
  // A command from the conversation itself (a slash command) where every thread is its own session.
  const threads = !running && env.conversation.threadId === undefined ? deps.lanes.runningUnder(sessionKey) : [];
  if (threads.length) return conversationCommand(command, env, threads);
  if (command === "stop") {
    if (!running) return (await deps.stopElsewhere?.(sessionKey)) ?? "Nothing is running here.";
    const waitingFor = running.waitingFor;
    running.controller.abort();
    if (waitingFor) return `🛑 Stopping the task that waits for approval of ${waitingFor.tool ?? "a tool"}; it will not run.`;
    return "🛑 Stopping the current task. Finished steps keep their results; the rest will not run.";
  }
  if (command === "status") {
    const context = await contextStatus(deps.store, sessionKey);
    const said = (text: string) => (context ? `${text} ${context}` : text);
    const queued = deps.lanes.queued(sessionKey);
    if (!running) return said(queued ? `Idle, ${queued} waiting.` : "Idle: nothing is running here.");
    const what = running.text.length > 80 ? `${running.text.slice(0, 79)}…` : running.text;
    if (running.waitingFor) {
      const secs = Math.round((Date.now() - running.waitingFor.since) / 1000);
      return said(`Waiting ${secs}s for approval of ${running.waitingFor.tool ?? "a tool"} for: "${what}" (ref ${running.traceId}). ${queued} waiting.`);
    }
    if (running.asking) {
      const secs = Math.round((Date.now() - running.asking.since) / 1000);
      return said(`Waiting ${secs}s for an answer to the question above, for: "${what}" (ref ${running.traceId}). ${queued} waiting.`);
    }
    const secs = Math.round((Date.now() - running.startedAt) / 1000);
    return said(`Working for ${secs}s on: "${what}" (ref ${running.traceId}). ${queued} waiting.`);
  }
  if (command === "compact") return askForCompaction(deps.store, sessionKey);
  if (running?.waitingFor) {
    // A task parked for approval ends without a trace in the fresh conversation; its card is cancelled.
    const { tool } = running.waitingFor;
    running.discard = true;
    running.controller.abort();
    await deps.store.resetSession(sessionKey);
    await forgetContext(deps.store, sessionKey);
    await deps.onSessionReset?.(sessionKey);
    return `🆕 Cancelled the task waiting for approval of ${tool ?? "a tool"} and started a fresh conversation here.`;
  }
  if (running) return "A task is still running here. Send /stop first, then /new.";
  if ((await deps.store.loadHistory(sessionKey, 1)).length === 0) {
    return "There is no earlier conversation here to forget (in a threaded channel, each thread is its own).";
  }
  await deps.store.resetSession(sessionKey);
  await forgetContext(deps.store, sessionKey);
  // The thread is still the bot's: follow-ups need no mention, also after a restart (gateway.ts).
  await deps.store.setValue(`${FRESH_THREAD}${sessionKey}`, String(Date.now()));
  await deps.onSessionReset?.(sessionKey);
  return "🆕 Started a fresh conversation here; I no longer see the earlier messages.";
}

/** What the bot does and the commands it understands, in the words of the channel `env` came from. */
export function helpText(env: IngressEnvelope): string {
  const { where, unit } = whereAnswered(env);
  const approvals = env.capabilities.inlineApproval
    ? "Before a risky step runs I post a card with buttons here, and only the people allowed to approve it can."
    : env.channel === "console"
      ? "Before a risky step runs I ask here: y yes, n no, a always."
      : "A risky step that needs someone's approval is asked for where I can show buttons; here I do not run it, and say why.";
  const lines = [
    `I'm your team's assistant. Ask me anything and I answer ${where}, using tools where they help; progress shows as I go.${unit ? ` Each ${unit} is its own conversation.` : ""} ${approvals}`,
    "",
    "/stop — stop what I'm doing here (a step waiting for approval does not run)",
    "/status — what I'm working on here, and how full the conversation's context is",
    "/new — start a fresh conversation here; I forget the earlier messages",
    "/compact — summarize the earlier conversation before the next message, to make room",
    "/always — what runs here without asking, and how to revoke it",
    "/help — this list",
  ];
  // Slack's own client takes a message that starts with "/" as one of its slash commands.
  if (env.channel === "slack") lines.push("", "In Slack, write a command after a mention of me or after a space, e.g. \" /stop\".");
  return lines.join("\n");
}

/** Where the bot answers a message like `env`, and what holds one conversation there (none: the whole chat). */
function whereAnswered(env: IngressEnvelope): { where: string; unit?: string } {
  if (env.conversation.kind === "dm" || !env.capabilities.threads) return { where: "here" };
  // A Telegram group is one conversation, except a forum, where each topic is one.
  if (env.channel === "telegram") return env.conversation.threadId === undefined ? { where: "here" } : { where: "in this topic", unit: "topic" };
  return { where: "in a thread", unit: "thread" };
}

/** /stop and /status for the threads of a conversation: only the sender's own tasks are stopped. */
function conversationCommand(command: Exclude<BotCommand, "always">, env: IngressEnvelope, threads: Array<[string, RunningTurn]>): string {
  if (command === "new") return "Each thread here is its own conversation: start a new thread to start fresh.";
  if (command === "compact") return "Each thread here is its own conversation: send /compact in the thread.";
  if (command === "status") {
    // Posted in the channel for everyone: how long each runs and its reference, not what was asked.
    const lines = threads.map(([, t]) => `• for ${Math.round((Date.now() - t.startedAt) / 1000)}s (ref ${t.traceId})`);
    return `Working on ${threads.length} task${threads.length > 1 ? "s" : ""} here:\n${lines.join("\n")}`;
  }
  const mine = threads.filter(([, t]) => t.senderId === env.sender.id);
  // Parked tasks are stopped too: their cards are cancelled.
  if (!mine.length) return "None of the running tasks here is yours; type /stop in the task's thread to stop it.";
  for (const [, t] of mine) t.controller.abort();
  return `🛑 Stopping ${mine.length} task${mine.length > 1 ? "s" : ""} you started here.`;
}
