/**
 * Console approvals: the card is a question at the terminal — yes / no / always, and `n <reason>`
 * to deny with a reason — and the answer is a click like any other, decided through the pending approvals (so the turn parks while the
 * question is open, and a timeout or /stop closes the question). After a restart an open question
 * is asked again.
 */
import { denialReason, type ApprovalClick, type ApprovalClickOutcome, type ReplyTarget } from "../envelope.ts";
import { approvalCardText, type ApprovalCard, type ApprovalResolution } from "./card.ts";
import type { CardPoster } from "./pending-approvals.ts";
import type { PromptOptions } from "../ports.ts";

export interface ConsoleQuestions {
  /** Asks the person at the terminal; rejects when `signal` aborts. */
  prompt(question: string, signal: AbortSignal, options?: PromptOptions): Promise<string>;
  /** Prints a line for the person (the decision made elsewhere: a timeout, /stop). */
  say(target: ReplyTarget, text: string): Promise<void>;
  /** Hands an answer to the pending approvals, as a click. */
  decide(click: ApprovalClick): Promise<ApprovalClickOutcome>;
}

/** A terminal answer: the outcome, and for a denial the reason typed after `n` (`n not today`). */
export interface ConsoleAnswer {
  outcome: "approved" | "denied" | "always";
  reason?: string;
}

/** Parses a terminal answer; undefined when it is none of yes / no [reason] / always. */
export function parseConsoleAnswer(answer: string): ConsoleAnswer | undefined {
  const a = answer.trim().toLowerCase();
  if (["y", "yes", "approve", "ok"].includes(a)) return { outcome: "approved" };
  if (["a", "always"].includes(a)) return { outcome: "always" };
  const denial = /^(?:n|no|deny)(?:\s+([\s\S]*))?$/i.exec(answer.trim());
  if (a === "" || denial) {
    const reason = denialReason(denial?.[1]);
    return reason ? { outcome: "denied", reason } : { outcome: "denied" };
  }
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
        let question = `${approvalCardText(card)}\nRun it? [y]es / [n]o / [a]lways (n <reason> says why): `;
        // The card is in the store: a stop leaves it open, to be asked again at the next start.
        const keep = { keep: true };
        let answer = parseConsoleAnswer(await questions.prompt(question, controller.signal, keep));
        while (!answer) {
          question = "Please answer y (yes), n (no, or n <reason>) or a (always): ";
          answer = parseConsoleAnswer(await questions.prompt(question, controller.signal, keep));
        }
        open.delete(card.approvalId);
        const actor = { id: card.requester.id, name: card.requester.name, isBot: false };
        const reason = answer.reason ? { reason: answer.reason } : {};
        await questions.decide({ channel: "console", approvalId: card.approvalId, choice: CHOICE[answer.outcome], actor, ...reason });
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
