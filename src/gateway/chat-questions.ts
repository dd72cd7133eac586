/**
 * Questions a running tool asks (an MCP server's elicitation, a sampling request to approve) on a
 * channel with buttons: each step of the question is a message in the turn's thread with buttons
 * under it; the answer is a click on one of them, or a reply in that thread, from one of the
 * people allowed to answer. Anyone else's click is refused and changes nothing. A reply that
 * answers a question is not a new message for the bot. Open questions live in memory only: the
 * call that asks ends with the process anyway.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { encodeButtonPayload, type ButtonClick, type IngressEnvelope, type ReplyTarget } from "../envelope.ts";
import type { ButtonClickOutcome, OutboundPort } from "../ports.ts";
import type { Delivery } from "../delivery/delivery.ts";
import type { PromptReply, PromptStep, QuestionPrompt } from "../approval/question-flow.ts";
import type { QuestionAudience } from "../approval/questions.ts";
import type { ButtonRoutes } from "./button-routes.ts";

/** The button kind of question steps: `ghb:question:<step id>:<button id>`. */
export const QUESTION_BUTTON_KIND = "question";

/** A step on screen, waiting for its answer. */
interface OpenStep {
  channel: string;
  target: ReplyTarget;
  port: OutboundPort;
  step: PromptStep;
  audience: QuestionAudience;
  messageId?: string;
  /** Ends the step (once): removes it, takes its buttons away with `closing`, resolves `show`. */
  finish(reply: PromptReply, closing: string): void;
}

export interface ChatQuestionsOptions {
  delivery: Delivery;
  log: Logger;
  routes: ButtonRoutes;
}

const sameThread = (a: ReplyTarget, b: ReplyTarget) => a.conversationId === b.conversationId && (a.threadId ?? "") === (b.threadId ?? "");

export class ChatQuestions {
  private readonly open = new Map<string, OpenStep>();
  private readonly o: ChatQuestionsOptions;

  constructor(options: ChatQuestionsOptions) {
    this.o = options;
    options.routes.register(QUESTION_BUTTON_KIND, async (click, data) => this.click(click, data));
  }

  /** Steps waiting for an answer now. */
  get openCount(): number {
    return this.open.size;
  }

  /** How questions are shown on `channel`, through its port and delivery queue. */
  promptFor(channel: string, port: OutboundPort): QuestionPrompt {
    return { show: (step, options) => this.show(channel, port, step, options) };
  }

  /**
   * A message that answers an open question in its thread, from someone allowed to answer: taken
   * as the answer (true), so the gateway does not start a turn for it.
   */
  takeReply(env: IngressEnvelope): boolean {
    for (const open of this.open.values()) {
      if (open.channel !== env.channel || !open.step.acceptsReply || !sameThread(open.target, env.replyTo)) continue;
      if (!open.audience.answerers.includes(env.sender.id)) continue;
      const by = { id: env.sender.id, ...(env.sender.name ? { name: env.sender.name } : {}) };
      open.finish({ kind: "reply", text: env.text, by }, `— answered by ${by.name ?? by.id}`);
      return true;
    }
    return false;
  }

  private show(
    channel: string,
    port: OutboundPort,
    step: PromptStep,
    { audience, signal, deadline }: { audience: QuestionAudience; signal: AbortSignal; deadline: number },
  ): Promise<PromptReply> {
    if (signal.aborted) return Promise.resolve({ kind: "cancelled" });
    const id = randomBytes(6).toString("base64url");
    const target = audience.target;
    return new Promise<PromptReply>((resolve) => {
      let done = false;
      const onAbort = () => open.finish({ kind: "cancelled" }, "— stopped");
      const timer = setTimeout(() => open.finish({ kind: "timeout" }, "— no answer in time"), Math.max(0, deadline - Date.now()));
      timer.unref();
      const open: OpenStep = {
        channel, target, port, step, audience,
        finish: (reply, closing) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          this.open.delete(id);
          resolve(reply);
          // A click edits the message itself (its outcome's `replace`); the other endings edit here.
          if (reply.kind !== "button") void this.close(open, closing);
        },
      };
      this.open.set(id, open);
      signal.addEventListener("abort", onAbort, { once: true });
      const buttons = step.buttons.map((b) => ({ label: b.label, payload: encodeButtonPayload(QUESTION_BUTTON_KIND, `${id}:${b.id}`) }));
      this.o.delivery
        .run(target, () => port.send(target, { text: step.text, plain: true, literal: true, kind: "notice", buttons }), audience.traceId)
        .then((sent) => {
          open.messageId = sent.id;
          // Answered (a reply, the deadline) while the message queued: its buttons must go too.
          if (done) void this.close(open, "");
        })
        .catch((err: Error) => {
          this.o.log.warn({ traceId: audience.traceId, err: err.message }, "a question could not be posted");
          open.finish({ kind: "cancelled" }, "");
        });
    });
  }

  private async click(click: ButtonClick, data: string): Promise<ButtonClickOutcome> {
    // The step id is base64url (no colon); button ids may hold one (`opt:2`).
    const sep = data.indexOf(":");
    const open = sep > 0 ? this.open.get(data.slice(0, sep)) : undefined;
    if (!open || open.channel !== click.channel) return { message: "This question is closed; nothing changed." };
    const buttonId = data.slice(sep + 1);
    if (!open.step.buttons.some((b) => b.id === buttonId)) return { message: "That is not a valid button; nothing changed." };
    if (!open.audience.answerers.includes(click.actor.id)) {
      const who = open.audience.requester.name ?? open.audience.requester.id;
      return { message: `Only ${who}${open.audience.answerers.length > 1 ? " or an approver" : ""} may answer this; nothing changed.` };
    }
    const by = { id: click.actor.id, ...(click.actor.name ? { name: click.actor.name } : {}) };
    open.finish({ kind: "button", id: buttonId, by }, "");
    const label = open.step.buttons.find((b) => b.id === buttonId)!.label;
    return { replace: { text: `${open.step.text}\n— ${by.name ?? by.id}: ${label}`, plain: true, literal: true, buttons: [] } };
  }

  /** Takes a step's buttons away, saying how it ended. */
  private async close(open: OpenStep, closing: string): Promise<void> {
    if (!open.messageId || !open.port.edit) return;
    const text = closing ? `${open.step.text}\n${closing}` : open.step.text;
    try {
      await this.o.delivery.run(open.target, () => open.port.edit!(open.target, open.messageId!, { text, plain: true, literal: true, buttons: [] }), open.audience.traceId);
    } catch (err) {
      this.o.log.warn({ traceId: open.audience.traceId, err: (err as Error).message }, "a question's buttons could not be removed");
    }
  }
}
