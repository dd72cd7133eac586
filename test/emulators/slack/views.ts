/**
 * Modals in the Slack emulator: the trigger_id each interaction carries (valid for 3 s and for one
 * views.open, as Slack's: `expired_trigger_id`, `exchanged_trigger_id`, `invalid_trigger_id`),
 * `views.open` with Slack's checks on the view (type, title/submit/close ≤ 24 characters,
 * callback_id, private_metadata ≤ 3,000, input blocks and plain_text_input limits), the modals each
 * person has open, and what a submission's acknowledgement did to its modal (closed, or errors
 * shown under its inputs). A submission is refused here as Slack's client refuses it: a required
 * input left empty, or text over the input's max_length.
 */
import { randomUUID } from "node:crypto";

/** How long a trigger_id can open a modal. */
export const TRIGGER_TTL_MS = 3000;

/** Slack's limits for a modal view. */
export const VIEW_LIMITS = {
  title: 24,
  button: 24,
  callbackId: 255,
  privateMetadata: 3000,
  blocks: 100,
  label: 2000,
  hint: 2000,
  placeholder: 150,
  actionId: 255,
  inputLength: 3000,
} as const;

type Json = Record<string, unknown>;

/** An input of an open modal, as the person fills it in. */
export interface ModalInput {
  blockId: string;
  actionId: string;
  label: string;
  multiline: boolean;
  maxLength?: number;
  optional: boolean;
}

/** A modal opened with views.open. */
export interface EmulatedView {
  id: string;
  /** The person it is shown to (who made the interaction that opened it). */
  user: string;
  callbackId?: string;
  privateMetadata: string;
  title: string;
  inputs: ModalInput[];
  /** The view exactly as the app sent it. */
  raw: Json;
  state: "open" | "closed";
  /** Errors the app's last acknowledgement showed under the inputs (block id → message). */
  errors?: Record<string, string>;
  /** The app did not acknowledge a submission within 3 s: Slack showed the person an error and kept the modal open. */
  unanswered?: boolean;
  openedAt: number;
}

const textOf = (obj: unknown): string | undefined =>
  obj && typeof obj === "object" && typeof (obj as Json).text === "string" ? ((obj as Json).text as string) : undefined;

function plainText(obj: unknown, field: string, max: number, required: boolean): string | undefined {
  if (obj === undefined) return required ? `${field} is required` : undefined;
  if (!obj || typeof obj !== "object" || (obj as Json).type !== "plain_text") return `${field} must be a plain_text object`;
  const text = textOf(obj) ?? "";
  if (text.length === 0) return `${field} must not be empty`;
  if (text.length > max) return `${field} must be at most ${max} characters`;
  return undefined;
}

/** Why Slack would refuse this view in views.open, or undefined when it is fine. */
export function viewProblem(view: Json): string | undefined {
  if (view.type !== "modal") return "view.type must be modal";
  const blocks = view.blocks;
  if (!Array.isArray(blocks) || blocks.length > VIEW_LIMITS.blocks) return `view.blocks must be an array of at most ${VIEW_LIMITS.blocks}`;
  const hasInput = blocks.some((b) => (b as Json | null)?.type === "input");
  const why =
    plainText(view.title, "view.title", VIEW_LIMITS.title, true) ??
    plainText(view.submit, "view.submit", VIEW_LIMITS.button, hasInput) ??
    plainText(view.close, "view.close", VIEW_LIMITS.button, false);
  if (why) return why;
  if (view.callback_id !== undefined && (typeof view.callback_id !== "string" || view.callback_id.length > VIEW_LIMITS.callbackId)) {
    return `view.callback_id must be a string of at most ${VIEW_LIMITS.callbackId} characters`;
  }
  if (view.private_metadata !== undefined && (typeof view.private_metadata !== "string" || view.private_metadata.length > VIEW_LIMITS.privateMetadata)) {
    return `view.private_metadata must be a string of at most ${VIEW_LIMITS.privateMetadata} characters`;
  }
  const blockIds = new Set<string>();
  for (const [i, raw] of blocks.entries()) {
    const block = (raw ?? {}) as Json;
    if (typeof block.block_id === "string") {
      if (blockIds.has(block.block_id)) return `view.blocks[${i}]: duplicate block_id ${block.block_id}`;
      blockIds.add(block.block_id);
    }
    if (block.type === "section" || block.type === "context" || block.type === "divider" || block.type === "header") continue;
    if (block.type !== "input") return `view.blocks[${i}]: unsupported type ${String(block.type)}`;
    const inputWhy = plainText(block.label, `view.blocks[${i}].label`, VIEW_LIMITS.label, true) ?? plainText(block.hint, `view.blocks[${i}].hint`, VIEW_LIMITS.hint, false);
    if (inputWhy) return inputWhy;
    const el = (block.element ?? {}) as Json;
    if (el.type !== "plain_text_input") return `view.blocks[${i}].element: unsupported type ${String(el.type)}`;
    if (typeof el.action_id !== "string" || el.action_id.length === 0 || el.action_id.length > VIEW_LIMITS.actionId) {
      return `view.blocks[${i}].element.action_id must be 1-${VIEW_LIMITS.actionId} characters`;
    }
    for (const key of ["max_length", "min_length"] as const) {
      const n = el[key];
      if (n !== undefined && (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > VIEW_LIMITS.inputLength)) {
        return `view.blocks[${i}].element.${key} must be an integer from 0 to ${VIEW_LIMITS.inputLength}`;
      }
    }
    const placeholderWhy = plainText(el.placeholder, `view.blocks[${i}].element.placeholder`, VIEW_LIMITS.placeholder, false);
    if (placeholderWhy) return placeholderWhy;
  }
  return undefined;
}

/** Trigger ids, open modals and views.open. */
export class Views {
  private readonly triggers = new Map<string, { user: string; issuedAt: number; used: boolean }>();
  /** Every modal opened, oldest first. */
  readonly opened: EmulatedView[] = [];

  /** A fresh trigger_id for an interaction by `user`. */
  issueTrigger(user: string, now = Date.now()): string {
    const id = `${now}.${randomUUID().slice(0, 8)}`;
    this.triggers.set(id, { user, issuedAt: now, used: false });
    return id;
  }

  /** Runs views.open: the trigger's checks, then the view's. */
  open(args: Json, now = Date.now()): { error: string; extra?: Json } | { view: EmulatedView } {
    const triggerId = typeof args.trigger_id === "string" ? args.trigger_id : undefined;
    if (!triggerId) return { error: "invalid_arguments", extra: { response_metadata: { messages: ["[ERROR] missing required field: trigger_id"] } } };
    const trigger = this.triggers.get(triggerId);
    if (!trigger) return { error: "invalid_trigger_id" };
    if (trigger.used) return { error: "exchanged_trigger_id" };
    if (now - trigger.issuedAt > TRIGGER_TTL_MS) return { error: "expired_trigger_id" };
    let raw: unknown = args.view;
    if (typeof raw === "string") {
      try {
        raw = JSON.parse(raw);
      } catch {
        return { error: "invalid_arguments", extra: { response_metadata: { messages: ["[ERROR] view is not valid JSON"] } } };
      }
    }
    if (!raw || typeof raw !== "object") return { error: "invalid_arguments", extra: { response_metadata: { messages: ["[ERROR] missing required field: view"] } } };
    const view = raw as Json;
    const why = viewProblem(view);
    if (why) return { error: "invalid_arguments", extra: { response_metadata: { messages: [`[ERROR] ${why}`] } } };
    trigger.used = true;
    const inputs = (view.blocks as Json[]).filter((b) => b.type === "input").map((b): ModalInput => {
      const el = b.element as Json;
      return {
        blockId: typeof b.block_id === "string" ? b.block_id : `b${randomUUID().slice(0, 5)}`,
        actionId: el.action_id as string,
        label: textOf(b.label) ?? "",
        multiline: el.multiline === true,
        ...(typeof el.max_length === "number" ? { maxLength: el.max_length } : {}),
        optional: b.optional === true,
      };
    });
    const opened: EmulatedView = {
      id: `V${randomUUID().replace(/-/g, "").slice(0, 10).toUpperCase()}`,
      user: trigger.user,
      ...(typeof view.callback_id === "string" ? { callbackId: view.callback_id } : {}),
      privateMetadata: typeof view.private_metadata === "string" ? view.private_metadata : "",
      title: textOf(view.title) ?? "",
      inputs,
      raw: view,
      state: "open",
      openedAt: now,
    };
    this.opened.push(opened);
    return { view: opened };
  }

  /** The modals `user` has open now, oldest first. */
  openFor(user: string): EmulatedView[] {
    return this.opened.filter((v) => v.user === user && v.state === "open");
  }

  /**
   * The view_submission payload for `values` (input action id → text) typed into an open modal;
   * throws where Slack's client would not let the person submit.
   */
  submissionPayload(view: EmulatedView, values: Record<string, string>, ids: { teamId: string; appId: string; botId: string; userName: string }): Json {
    if (view.state !== "open") throw new Error(`the modal ${view.id} is not open`);
    const state: Record<string, Record<string, Json>> = {};
    for (const input of view.inputs) {
      const value = values[input.actionId] ?? "";
      if (!input.optional && value.trim() === "") throw new Error(`Slack does not submit the modal with "${input.label}" empty`);
      if (input.maxLength !== undefined && value.length > input.maxLength) throw new Error(`Slack does not accept more than ${input.maxLength} characters in "${input.label}"`);
      state[input.blockId] = { [input.actionId]: { type: "plain_text_input", value: value === "" ? null : value } };
    }
    return {
      type: "view_submission",
      team: { id: ids.teamId, domain: "emulated" },
      user: { id: view.user, username: ids.userName, name: ids.userName, team_id: ids.teamId },
      api_app_id: ids.appId,
      token: "emulator-verification-token",
      trigger_id: this.issueTrigger(view.user),
      view: {
        id: view.id, team_id: ids.teamId, type: "modal", blocks: view.raw.blocks, private_metadata: view.privateMetadata,
        callback_id: view.callbackId ?? "", state: { values: state }, hash: `${view.openedAt}.${view.id}`,
        title: view.raw.title, clear_on_close: false, notify_on_close: false, close: view.raw.close ?? null, submit: view.raw.submit ?? null,
        previous_view_id: null, root_view_id: view.id, app_id: ids.appId, external_id: "", app_installed_team_id: ids.teamId, bot_id: ids.botId,
      },
      response_urls: [],
      is_enterprise_install: false,
      enterprise: null,
    };
  }

  /**
   * Applies the app's acknowledgement of a submission, as Slack does: `response_action: "errors"`
   * keeps the modal open with the errors under its inputs; an empty ack or `clear` closes it; no
   * ack within 3 s leaves it open with Slack's own error.
   */
  acknowledged(view: EmulatedView, ackPayload: unknown, inTime: boolean): void {
    if (!inTime) {
      view.unanswered = true;
      return;
    }
    let payload = ackPayload;
    if (typeof payload === "string") {
      try {
        payload = payload ? JSON.parse(payload) : undefined;
      } catch {
        payload = undefined;
      }
    }
    const p = (payload ?? {}) as Json;
    if (p.response_action === "errors" && p.errors && typeof p.errors === "object") {
      view.errors = p.errors as Record<string, string>;
      return;
    }
    delete view.errors;
    view.state = "closed";
  }
}
