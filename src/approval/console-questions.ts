/**
 * Questions at the console: each step of a question is asked at the terminal prompt, its buttons
 * named on the prompt line ("Yes / No / Decline") and answered by typing a label, an option's
 * number, or the answer itself. The person at the terminal is the one who made the request.
 * `/stop` typed at a question stops the turn (the console passes commands at a question on to the
 * gateway), which ends the question as cancelled; it never reaches the asker as text.
 */
import { parseBotCommand } from "../envelope.ts";
import { fieldByFieldQuestioner, type PromptStep, type QuestionPrompt } from "./question-flow.ts";
import type { Questioner } from "./questions.ts";

/** Asks the person at the terminal; rejects when `signal` aborts (the console adapter's `prompt`). */
export type TerminalPrompt = (question: string, signal: AbortSignal) => Promise<string>;

/** The console's QuestionPrompt over the terminal prompt. */
export function consoleQuestionPrompt(prompt: TerminalPrompt): QuestionPrompt {
  return {
    async show(step, { audience, signal, deadline }) {
      const left = deadline - Date.now();
      if (left <= 0) return { kind: "timeout" };
      try {
        const text = await prompt(`${step.text}\n${promptLine(step)}: `, AbortSignal.any([signal, AbortSignal.timeout(left)]));
        // A prompt that hands /stop over as text: it ends the question, it is no answer.
        if (parseBotCommand(text) === "stop") return { kind: "cancelled" };
        return { kind: "reply", text, by: { id: audience.requester.id, name: audience.requester.name } };
      } catch {
        return signal.aborted ? { kind: "cancelled" } : { kind: "timeout" };
      }
    },
  };
}

/** A Questioner that asks at the terminal. */
export function consoleQuestioner(prompt: TerminalPrompt): Questioner {
  return fieldByFieldQuestioner(consoleQuestionPrompt(prompt));
}

/** How to answer a step, in words: its buttons become typed choices. */
function promptLine(step: PromptStep): string {
  const options = step.buttons.some((b) => b.id.startsWith("opt:"));
  const others = step.buttons.filter((b) => !b.id.startsWith("opt:")).map((b) => b.label).join(" / ");
  if (options) return others ? `Answer with a number or name, or ${others}` : "Answer with a number or name";
  if (step.acceptsReply) return others ? `Type your answer, or ${others}` : "Type your answer";
  return others;
}
