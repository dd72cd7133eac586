/**
 * Questions a running tool asks (an MCP server's elicitation, a sampling request to approve) on a
 * channel with buttons: each step of the question is a message in the turn's thread with buttons
 * under it; the answer is a click on one of them, or a reply in that thread, from one of the
 * people allowed to answer. Anyone else's click is refused and changes nothing. A reply that
 * answers a question is not a new message for the bot.
 *
 * The call that asks lives in one process. With several replicas (`shared`), each open step is
 * also written to the store, so a click or a reply that reaches another replica is checked there
 * and passed on; the asking replica picks it up within a poll.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import { encodeButtonPayload, type ButtonClick, type IngressEnvelope, type ReplyTarget } from "../envelope.ts";
import type { ButtonClickOutcome, OutboundPort } from "../ports.ts";
import type { Delivery } from "../delivery/delivery.ts";
import type { PromptReply, PromptStep, QuestionPrompt } from "../approval/question-flow.ts";
import type { QuestionAudience } from "../approval/questions.ts";
import type { Store } from "../store/store.ts";
import type { ButtonRoutes } from "./button-routes.ts";

/** The button kind of question steps: `ghb:question:<step id>:<button id>`. */
export const QUESTION_BUTTON_KIND = "question";

/** Store keys of shared steps: what is asked, and an answer passed on by another replica. */
const OPEN = "question.open:";
const ANSWER = "question.answer:";
/** How often the asking replica looks for answers passed on. */
const RELAY_POLL_MS = 300;

/** What another replica needs to check an answer to a step. */
const SharedStep = z.object({
  channel: z.string(),
  target: z.object({ conversationId: z.string(), threadId: z.string().optional() }).passthrough(),
  answerers: z.array(z.string()),
  requester: z.string(),
  buttons: z.array(z.object({ id: z.string(), label: z.string() })),
  acceptsReply: z.boolean(),
});
type SharedStep = z.infer<typeof SharedStep>;

const Answerer = z.object({ id: z.string(), name: z.string().optional() });
const RelayedAnswer = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("button"), id: z.string(), by: Answerer }),
  z.object({ kind: z.literal("reply"), text: z.string(), by: Answerer }),
]);
type RelayedAnswer = z.infer<typeof RelayedAnswer>;

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
  /** With several replicas: the store they share, through which answers reaching another replica are passed on. */
  shared?: Store;
}

const sameThread = (a: Pick<ReplyTarget, "conversationId" | "threadId">, b: ReplyTarget) =>
  a.conversationId === b.conversationId && (a.threadId ?? "") === (b.threadId ?? "");
const nameOf = (by: { id: string; name?: string }) => by.name ?? by.id;

export class ChatQuestions {
  private readonly open = new Map<string, OpenStep>();
  private readonly o: ChatQuestionsOptions;
  private poller: NodeJS.Timeout | undefined;

  constructor(options: ChatQuestionsOptions) {
    this.o = options;
    options.routes.register(QUESTION_BUTTON_KIND, async (click, data) => this.click(click, data));
  }

  /** Steps waiting for an answer in this process. */
  get openCount(): number {
    return this.open.size;
  }

  /** How questions are shown on `channel`, through its port and delivery queue. */
  promptFor(channel: string, port: OutboundPort): QuestionPrompt {
    return { show: (step, options) => this.show(channel, port, step, options) };
  }

  /**
   * A message that answers an open question in its thread, from someone allowed to answer: taken
   * as the answer (true), so the gateway does not start a turn for it. With replicas, a question
   * asked by another one is answered through the store.
   */
  async takeReply(env: IngressEnvelope): Promise<boolean> {
    const by = { id: env.sender.id, ...(env.sender.name ? { name: env.sender.name } : {}) };
    for (const open of this.open.values()) {
      if (open.channel !== env.channel || !open.step.acceptsReply || !sameThread(open.target, env.replyTo)) continue;
      if (!open.audience.answerers.includes(env.sender.id)) continue;
      open.finish({ kind: "reply", text: env.text, by }, `— answered by ${nameOf(by)}`);
      return true;
    }
    const shared = this.o.shared;
    if (!shared) return false;
    for (const { key, value } of await shared.listValues(OPEN)) {
      const step = this.readShared(value);
      if (!step || step.channel !== env.channel || !step.acceptsReply || !sameThread(step.target, env.replyTo)) continue;
      if (!step.answerers.includes(env.sender.id)) continue;
      await this.relay(key.slice(OPEN.length), { kind: "reply", text: env.text, by });
      return true;
    }
    return false;
  }

  /** Stops polling for answers passed on (shutdown). */
  close(): void {
    clearInterval(this.poller);
    this.poller = undefined;
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
          if (!this.open.size) this.close();
          void this.unshare(id);
          resolve(reply);
          // A click here edits the message itself (its outcome's `replace`); the other endings edit here.
          if (reply.kind !== "button" || closing) void this.closeStep(open, closing);
        },
      };
      this.open.set(id, open);
      signal.addEventListener("abort", onAbort, { once: true });
      void this.share(id, open);
      const buttons = step.buttons.map((b) => ({ label: b.label, payload: encodeButtonPayload(QUESTION_BUTTON_KIND, `${id}:${b.id}`) }));
      this.o.delivery
        .run(target, () => port.send(target, { text: step.text, plain: true, literal: true, kind: "notice", buttons }), audience.traceId)
        .then((sent) => {
          open.messageId = sent.id;
          // Answered (a reply, the deadline) while the message queued: its buttons must go too.
          if (done) void this.closeStep(open, "");
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
    if (sep <= 0) return { message: "This question is closed; nothing changed." };
    const stepId = data.slice(0, sep);
    const buttonId = data.slice(sep + 1);
    const by = { id: click.actor.id, ...(click.actor.name ? { name: click.actor.name } : {}) };
    const open = this.open.get(stepId);
    if (!open) return this.clickElsewhere(click, stepId, buttonId, by);
    if (open.channel !== click.channel) return { message: "This question is closed; nothing changed." };
    if (!open.step.buttons.some((b) => b.id === buttonId)) return { message: "That is not a valid button; nothing changed." };
    if (!open.audience.answerers.includes(click.actor.id)) return { message: notAllowed(open.audience.requester.name ?? open.audience.requester.id, open.audience.answerers) };
    open.finish({ kind: "button", id: buttonId, by }, "");
    const label = open.step.buttons.find((b) => b.id === buttonId)!.label;
    return { replace: { text: `${open.step.text}\n— ${nameOf(by)}: ${label}`, plain: true, literal: true, buttons: [] } };
  }

  /** A click on a step another replica asked: checked against the shared step, then passed on. */
  private async clickElsewhere(click: ButtonClick, stepId: string, buttonId: string, by: { id: string; name?: string }): Promise<ButtonClickOutcome> {
    const raw = this.o.shared ? await this.o.shared.getValue(`${OPEN}${stepId}`) : undefined;
    const step = raw === undefined ? undefined : this.readShared(raw);
    if (!step || step.channel !== click.channel) return { message: "This question is closed; nothing changed." };
    if (!step.buttons.some((b) => b.id === buttonId)) return { message: "That is not a valid button; nothing changed." };
    if (!step.answerers.includes(click.actor.id)) return { message: notAllowed(step.requester, step.answerers) };
    await this.relay(stepId, { kind: "button", id: buttonId, by });
    return {};
  }

  /** Writes a step where other replicas can check answers to it, and polls for theirs. */
  private async share(id: string, open: OpenStep): Promise<void> {
    const shared = this.o.shared;
    if (!shared) return;
    const record: SharedStep = {
      channel: open.channel, target: { conversationId: open.target.conversationId, ...(open.target.threadId ? { threadId: open.target.threadId } : {}) },
      answerers: open.audience.answerers, requester: open.audience.requester.name ?? open.audience.requester.id,
      buttons: open.step.buttons.map((b) => ({ id: b.id, label: b.label })), acceptsReply: open.step.acceptsReply,
    };
    try {
      await shared.setValue(`${OPEN}${id}`, JSON.stringify(record));
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, "a question could not be shared with the other replicas");
    }
    this.poller ??= setInterval(() => void this.pickUpRelayed(), RELAY_POLL_MS);
    this.poller.unref();
  }

  private async unshare(id: string): Promise<void> {
    const shared = this.o.shared;
    if (!shared) return;
    await Promise.all([shared.deleteValue(`${OPEN}${id}`), shared.deleteValue(`${ANSWER}${id}`)]).catch(() => {});
  }

  private async relay(id: string, answer: RelayedAnswer): Promise<void> {
    await this.o.shared!.setValue(`${ANSWER}${id}`, JSON.stringify(answer));
  }

  /** Answers other replicas passed on to steps open here. */
  private async pickUpRelayed(): Promise<void> {
    const shared = this.o.shared;
    if (!shared) return;
    for (const [id, open] of [...this.open]) {
      const raw = await shared.getValue(`${ANSWER}${id}`).catch(() => undefined);
      if (raw === undefined) continue;
      await shared.deleteValue(`${ANSWER}${id}`).catch(() => {});
      let answer: RelayedAnswer;
      try {
        answer = RelayedAnswer.parse(JSON.parse(raw));
      } catch {
        continue;
      }
      if (!open.audience.answerers.includes(answer.by.id)) continue;
      if (answer.kind === "button") {
        const label = open.step.buttons.find((b) => b.id === answer.id)?.label;
        if (label !== undefined) open.finish({ kind: "button", id: answer.id, by: answer.by }, `— ${nameOf(answer.by)}: ${label}`);
      } else if (open.step.acceptsReply) {
        open.finish({ kind: "reply", text: answer.text, by: answer.by }, `— answered by ${nameOf(answer.by)}`);
      }
    }
  }

  private readShared(raw: string): SharedStep | undefined {
    try {
      return SharedStep.parse(JSON.parse(raw));
    } catch {
      return undefined;
    }
  }

  /** Takes a step's buttons away, saying how it ended. */
  private async closeStep(open: OpenStep, closing: string): Promise<void> {
    if (!open.messageId || !open.port.edit) return;
    const text = closing ? `${open.step.text}\n${closing}` : open.step.text;
    try {
      await this.o.delivery.run(open.target, () => open.port.edit!(open.target, open.messageId!, { text, plain: true, literal: true, buttons: [] }), open.audience.traceId);
    } catch (err) {
      this.o.log.warn({ traceId: open.audience.traceId, err: (err as Error).message }, "a question's buttons could not be removed");
    }
  }
}

/** The refusal shown to someone who may not answer. */
function notAllowed(requester: string, answerers: string[]): string {
  return `Only ${requester}${answerers.length > 1 ? " or an approver" : ""} may answer this; nothing changed.`;
}
