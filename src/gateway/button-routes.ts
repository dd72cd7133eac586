/**
 * Where clicks on message buttons go (not approval cards: those are PendingApprovals'). A button's
 * payload is `ghb:<kind>:<data>`; each kind has one handler, registered at start (`always`: revoke
 * a remembered decision). The click is validated here once; a handler gets it typed, with its data.
 */
import type { Logger } from "pino";
import { ButtonClickSchema, decodeButtonPayload, type ButtonClick } from "../envelope.ts";
import type { ButtonClickOutcome } from "../ports.ts";

/** Handles the clicks of one kind of button; `data` is what follows `ghb:<kind>:`. Resolve fast: the click waits. */
export type ButtonHandler = (click: ButtonClick, data: string) => Promise<ButtonClickOutcome>;

/** Shown for a click that is not one of the bot's buttons (forged, or malformed on the way). */
export const NOT_A_VALID_BUTTON = "That is not a valid button; nothing changed.";

export class ButtonRoutes {
  private readonly handlers = new Map<string, ButtonHandler>();
  private readonly log: Logger;

  constructor(log: Logger) {
    this.log = log;
  }

  /** Registers the handler of `kind`; throws when the kind is taken (two features must not share payloads). */
  register(kind: string, handler: ButtonHandler): void {
    if (!/^[a-z][a-z0-9-]{0,15}$/.test(kind)) throw new Error(`not a valid button kind: ${JSON.stringify(kind)}`);
    if (this.handlers.has(kind)) throw new Error(`a handler for "${kind}" buttons is already registered`);
    this.handlers.set(kind, handler);
  }

  /** Routes one click to its kind's handler. Never rejects: a failure reads as a message to the clicker. */
  async handle(input: ButtonClick): Promise<ButtonClickOutcome> {
    const parsed = ButtonClickSchema.safeParse(input);
    if (!parsed.success) {
      this.log.warn({ issues: parsed.error.issues.map((i) => i.path.join(".")) }, "malformed button click refused");
      return { message: NOT_A_VALID_BUTTON };
    }
    const click = parsed.data;
    if (click.actor.isBot) return { message: "Buttons are for people; nothing changed." };
    const { kind, data } = decodeButtonPayload(click.payload)!;
    const handler = this.handlers.get(kind);
    if (!handler) {
      this.log.warn({ kind, channel: click.channel }, "click on a kind of button nothing handles");
      return { message: "This button does nothing any more; nothing changed." };
    }
    try {
      return await handler(click, data);
    } catch (err) {
      this.log.error({ kind, err: (err as Error).message }, "button click failed");
      return { message: "Sorry, that click could not be handled; nothing changed. Try again in a moment." };
    }
  }
}
