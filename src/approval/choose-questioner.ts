/**
 * Which questioner a channel's turns get (questions a running tool asks, see questions.ts): from
 * what the adapter can do, never from its name. The console asks at its prompt; a channel that
 * shows buttons and edits messages asks in the thread (`chat`); any other gets none, and the engine
 * declines its questions, saying so in the thread.
 */
import type { ChannelAdapter } from "../ports.ts";
import { consoleQuestioner } from "./console-questions.ts";
import { fieldByFieldQuestioner, type QuestionPrompt } from "./question-flow.ts";
import type { Questioner } from "./questions.ts";

/** How a channel with buttons shows a question's steps (the gateway's ChatQuestions). */
export interface ChatPrompts {
  promptFor(channel: string, port: ChannelAdapter["port"]): QuestionPrompt;
}

/** The questioner for `adapter`'s turns, or undefined where no one can be asked. */
export function questionerFor(adapter: ChannelAdapter, chat?: ChatPrompts): Questioner | undefined {
  if (adapter.prompt) return consoleQuestioner(adapter.prompt.bind(adapter));
  if (chat && adapter.capabilities.inlineApproval && adapter.capabilities.edit && adapter.port.edit) {
    return fieldByFieldQuestioner(chat.promptFor(adapter.channel, adapter.port));
  }
  return undefined;
}
