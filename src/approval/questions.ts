/**
 * Questions a running tool asks the person who made the request (an MCP server's elicitation, an
 * approval asked mid-call): what a question is, what an answer is, and the Questioner a channel
 * provides. Unlike an approval card, a question is asked while the call runs and waits in memory:
 * the server that asked is waiting on the same call. It is bounded by `approval.timeoutMs`, and the
 * turn's signal (`/stop`) cancels it.
 */
import type { ReplyTarget, Sender } from "../envelope.ts";

/** What every field of a question has. */
interface FieldBase {
  /** The key the answer is returned under. */
  name: string;
  /** A short label ("Your name"); from outside, shown as text. */
  label: string;
  description?: string;
  required: boolean;
}

/** A typed answer; `format` narrows what is accepted. */
export interface TextField extends FieldBase {
  type: "text";
  format?: "email" | "uri" | "date" | "date-time";
  minLength?: number;
  maxLength?: number;
  default?: string;
}

/** A number, typed. */
export interface NumberField extends FieldBase {
  type: "number";
  integer: boolean;
  minimum?: number;
  maximum?: number;
  default?: number;
}

/** Yes or no (two buttons). */
export interface BooleanField extends FieldBase {
  type: "boolean";
  default?: boolean;
}

/** One option of a choice: the value returned and the label shown. */
export interface ChoiceOption {
  value: string;
  label: string;
}

/** One of several options (a button each). */
export interface ChoiceField extends FieldBase {
  type: "choice";
  options: ChoiceOption[];
  default?: string;
}

/** Some of several options, typed as a list ("1, 3" or "Piano, Drums"). */
export interface MultiChoiceField extends FieldBase {
  type: "choices";
  options: ChoiceOption[];
  minItems?: number;
  maxItems?: number;
  default?: string[];
}

export type QuestionField = TextField | NumberField | BooleanField | ChoiceField | MultiChoiceField;

/** A value a field can take. */
export type FieldValue = string | number | boolean | string[];

/**
 * A question: one field answered with buttons (`boolean`, `enum`) or a reply (`text`), or a `form`
 * of several fields asked one after the other.
 */
export interface Question {
  kind: "boolean" | "enum" | "text" | "form";
  /** Who asks, as a person reads it: `MCP server "github"`. */
  from: string;
  /** What is asked, in the asker's words (from outside: shown as plain text). */
  title: string;
  fields: QuestionField[];
}

/** Who answered. */
export interface Answerer {
  id: string;
  name?: string;
}

/**
 * The answer: `accept` with a value per answered field (optional fields may be missing), `decline`
 * (the person said no, or no one can be asked here), `cancel` (no answer: timeout, `/stop`).
 */
export type QuestionAnswer =
  | { action: "accept"; values: Record<string, FieldValue>; by: Answerer }
  | { action: "decline"; by?: Answerer; reason: string }
  | { action: "cancel"; reason: string };

/** Who a question is for and where it is asked: the turn whose call asks. */
export interface QuestionAudience {
  /** Where the question is posted (the turn's thread). */
  target: ReplyTarget;
  /** The person who made the request. */
  requester: Sender;
  /** Ids of the people whose answer counts: the requester (when a person) and the channel's approvers. */
  answerers: string[];
  traceId: string;
  sessionKey: string;
}

export interface AskOptions {
  /** The turn's signal (and the asker's): aborting it ends the question with `cancel`. */
  signal: AbortSignal;
  /** How long the question waits for its whole answer (`approval.timeoutMs`). */
  timeoutMs: number;
  audience: QuestionAudience;
}

/** Asks questions on one channel. Never rejects: a failure to ask is a `cancel` with its reason. */
export interface Questioner {
  ask(question: Question, options: AskOptions): Promise<QuestionAnswer>;
}

/** The kind of a question with these fields. */
export function questionKind(fields: QuestionField[]): Question["kind"] {
  if (fields.length !== 1) return "form";
  const only = fields[0]!;
  if (only.type === "boolean") return "boolean";
  if (only.type === "choice") return "enum";
  return only.type === "choices" ? "form" : "text";
}
