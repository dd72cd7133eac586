/**
 * Modals in the Discord emulator: which interaction callback types each interaction may be answered
 * with (a modal — type 9 — only for a command or a component interaction, never for a modal
 * submission; 6 and 7 only where there is a message), the modal body Discord accepts (custom_id ≤ 100,
 * title ≤ 45, 1–5 action rows of one text input each, with its limits), the modals a person has
 * open, and the MODAL_SUBMIT interaction a submission sends. A submission is refused here as
 * Discord's client refuses it: a required input left empty, or text outside min/max_length.
 */
import { z } from "zod";

/** Interaction types (Discord's numbering). */
export const InteractionType = { Ping: 1, ApplicationCommand: 2, MessageComponent: 3, ModalSubmit: 5 } as const;

/** Callback types Discord accepts for each interaction type (with a message for component and modal submissions). */
export function allowedCallbackTypes(interactionType: number, hasMessage: boolean): number[] {
  switch (interactionType) {
    case InteractionType.Ping:
      return [1];
    case InteractionType.ApplicationCommand:
      return [4, 5, 9];
    case InteractionType.MessageComponent:
      return [4, 5, 6, 7, 9];
    case InteractionType.ModalSubmit:
      return hasMessage ? [4, 5, 6, 7] : [4, 5];
    default:
      return [4, 5];
  }
}

/** Discord's 50035 body for a callback type the interaction does not take. */
export function callbackTypeRefusal(allowed: number[]): Record<string, unknown> {
  return {
    message: "Invalid Form Body",
    code: 50035,
    errors: { type: { _errors: [{ code: "BASE_TYPE_CHOICES", message: `Value must be one of {${allowed.join(", ")}}.` }] } },
  };
}

const TextInputSchema = z.object({
  type: z.literal(4),
  custom_id: z.string().min(1).max(100),
  style: z.union([z.literal(1), z.literal(2)]),
  label: z.string().min(1).max(45),
  min_length: z.number().int().min(0).max(4000).optional(),
  max_length: z.number().int().min(1).max(4000).optional(),
  required: z.boolean().optional(),
  value: z.string().max(4000).optional(),
  placeholder: z.string().max(100).optional(),
});

/** The `data` of a type 9 (MODAL) callback. */
export const ModalSchema = z.object({
  custom_id: z.string().min(1).max(100),
  title: z.string().min(1).max(45),
  components: z.array(z.object({ type: z.literal(1), components: z.array(TextInputSchema).length(1) })).min(1).max(5),
});
export type ModalBody = z.infer<typeof ModalSchema>;

/** A modal shown to a person in answer to one of their interactions. */
export interface EmuModal {
  /** The interaction the modal answered. */
  interactionId: string;
  userId: string;
  channelId: string;
  /** The message whose component opened it, if any (its submission then carries the message). */
  messageId?: string;
  body: ModalBody;
  open: boolean;
}

/**
 * The `data` of the MODAL_SUBMIT interaction for `values` (input custom_id → text) typed into
 * `modal`; throws where Discord's client would not let the person submit.
 */
export function modalSubmitData(modal: EmuModal, values: Record<string, string>): Record<string, unknown> {
  if (!modal.open) throw new Error(`the modal ${modal.body.custom_id} is not open`);
  const rows = modal.body.components.map((row) => {
    const input = row.components[0]!;
    const value = values[input.custom_id] ?? "";
    const required = input.required ?? true;
    if (required && value.length === 0) throw new Error(`Discord does not submit the modal with "${input.label}" empty`);
    if (input.max_length !== undefined && value.length > input.max_length) throw new Error(`Discord does not accept more than ${input.max_length} characters in "${input.label}"`);
    if (value.length > 0 && input.min_length !== undefined && value.length < input.min_length) throw new Error(`Discord needs at least ${input.min_length} characters in "${input.label}"`);
    return { type: 1, components: [{ type: 4, custom_id: input.custom_id, value }] };
  });
  return { custom_id: modal.body.custom_id, components: rows };
}
