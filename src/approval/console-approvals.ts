/**
 * Console approvals: the card is a question at the terminal — yes / no / always — and the answer
 * is a click like any other, decided through the pending approvals (so the turn parks while the
 * question is open, and a timeout or /stop closes the question). After a restart an open question
 * is asked again.
 */
import type { ApprovalClick, ApprovalClickOutcome, ReplyTarget } from "../envelope.ts";
import { approvalCardText, type ApprovalCard, type ApprovalResolution } from "./card.ts";
import type { CardPoster } from "./pending-approvals.ts";

export interface ConsoleQuestions {
  /** Asks the person at the terminal; rejects when `signal` aborts. */
  prompt(question: string, signal: AbortSignal): Promise<string>;
  /** Prints a line for the person (the decision made elsewhere: a timeout, /stop). */
  say(target: ReplyTarget, text: string): Promise<void>;
  /** Hands an answer to the pending approvals, as a click. */
  decide(click: ApprovalClick): Promise<ApprovalClickOutcome>;
}

/** Parses a terminal answer; undefined when it is none of yes / no / always. */
export function parseConsoleAnswer(answer: string): "approved" | "denied" | "always" | undefined {
  const a = answer.trim().toLowerCase();
  if (["y", "yes", "approve", "ok"].includes(a)) return "approved";
  if (["n", "no", "deny", ""].includes(a)) return "denied";
  if (["a", "always"].includes(a)) return "always";
  return undefined;
}

const CHOICE = { approved: "approve", denied: "deny", always: "always" } as const;

/** A card poster that asks at the console prompt. */
export function consoleCardPoster(questions: ConsoleQuestions): CardPoster {
  const open = new Map<string, AbortController>();
  return {
    askAgainAfterRestart: true,
    async post(_target, card: ApprovalCard) {
      const controller = new AbortController();
      open.set(card.approvalId, controller);
      void (async () => {
        let question = `${approvalCardText(card)}\nRun it? [y]es / [n]o / [a]lways: `;
        let outcome = parseConsoleAnswer(await questions.prompt(question, controller.signal));
        while (!outcome) {
          question = "Please answer y (yes), n (no) or a (always): ";
          outcome = parseConsoleAnswer(await questions.prompt(question, controller.signal));
        }
        open.delete(card.approvalId);
        const actor = { id: card.requester.id, name: card.requester.name, isBot: false };
        await questions.decide({ channel: "console", approvalId: card.approvalId, choice: CHOICE[outcome], actor });
      })().catch(() => open.delete(card.approvalId));
      return `console:${card.approvalId}`;
    },
    async resolve(target, _messageId, card: ApprovalCard, resolution: ApprovalResolution) {
      const controller = open.get(card.approvalId);
      if (!controller) return;
      open.delete(card.approvalId);
      controller.abort();
      await questions.say(target, resolution.text);
    },
  };
}
