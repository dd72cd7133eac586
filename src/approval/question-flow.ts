/**
 * A Questioner built on the one thing a channel must do to ask: show a message with buttons and
 * wait for a click or a reply from an allowed person (a QuestionPrompt). The fields are asked one
 * after the other, each answer is read and checked (a wrong one is asked again, saying why), and a
 * form ends with a review of the answers before they are sent. The console and chat channels
 * differ only in their QuestionPrompt.
 */
import type { Answerer, AskOptions, FieldValue, Question, QuestionAnswer, QuestionAudience, QuestionField, Questioner } from "./questions.ts";
import { describeFieldValue, readFieldReply } from "./question-fields.ts";

/** A button of a prompt: `id` comes back on a click, `label` is shown. */
export interface PromptButton {
  id: string;
  label: string;
}

/** One message of a question. */
export interface PromptStep {
  /** Plain text (what the asker wrote is in it, so a channel must not read it as markup or mentions). */
  text: string;
  buttons: PromptButton[];
  /** A typed reply answers this step (besides the buttons). */
  acceptsReply: boolean;
}

/** What ended one step: a click, a reply, the deadline, or the signal. */
export type PromptReply =
  | { kind: "button"; id: string; by: Answerer }
  | { kind: "reply"; text: string; by: Answerer }
  | { kind: "timeout" }
  | { kind: "cancelled" };

/**
 * What a channel provides to ask questions. `show` posts `step` to `audience.target` and resolves
 * with the first click on one of its buttons or the first reply in that thread from one of
 * `audience.answerers` (others are told they may not answer, and ignored); `timeout` at `deadline`,
 * `cancelled` when `signal` aborts. It then takes the buttons away. It never rejects.
 */
export interface QuestionPrompt {
  show(step: PromptStep, options: { audience: QuestionAudience; signal: AbortSignal; deadline: number }): Promise<PromptReply>;
}

/** Button ids the flow uses besides the options (`opt:<n>`). */
const YES = "yes";
const NO = "no";
const SKIP = "skip";
const DEFAULT = "default";
const DECLINE = "decline";
const SEND = "send";
/** Wrong answers in a row to one field before the question is given up. */
const MAX_ATTEMPTS = 3;

/** A Questioner that asks through `prompt`, field by field. */
export function fieldByFieldQuestioner(prompt: QuestionPrompt): Questioner {
  return {
    async ask(question, options) {
      try {
        return await askFields(prompt, question, options);
      } catch (err) {
        return { action: "cancel", reason: `the question could not be asked: ${(err as Error).message}` };
      }
    },
  };
}

async function askFields(prompt: QuestionPrompt, question: Question, options: AskOptions): Promise<QuestionAnswer> {
  const deadline = Date.now() + options.timeoutMs;
  const show = (step: PromptStep) => prompt.show(step, { audience: options.audience, signal: options.signal, deadline });
  const values: Record<string, FieldValue> = {};
  let by: Answerer | undefined;
  const header = [`❓ ${question.from} asks: ${question.title}`, `Your answers go to ${question.from}; never give passwords or keys here.`];
  const { fields } = question;
  for (const [i, field] of fields.entries()) {
    let problem: string | undefined;
    for (let attempt = 1; ; attempt++) {
      const lines = i === 0 && attempt === 1 ? [...header] : [];
      if (problem) lines.push(`⚠️ ${problem}. Try again.`);
      lines.push(fieldLine(field, fields.length > 1 ? `(${i + 1}/${fields.length}) ` : ""));
      const reply = await show({ text: lines.join("\n"), buttons: buttonsFor(field), acceptsReply: acceptsReply(field) });
      const read = readStep(field, reply);
      if ("end" in read) return read.end;
      by = read.by;
      if (read.ok) {
        if (read.value !== undefined) values[field.name] = read.value;
        break;
      }
      if (attempt >= MAX_ATTEMPTS) return { action: "cancel", reason: `no valid answer to "${field.label}" after ${MAX_ATTEMPTS} tries` };
      problem = read.error;
    }
  }
  if (question.kind === "form") {
    const summary = fields.filter((f) => values[f.name] !== undefined).map((f) => `- ${f.label}: ${describeFieldValue(f, values[f.name]!)}`);
    const buttons = [{ id: SEND, label: "Send" }, { id: DECLINE, label: "Decline" }];
    const reply = await show({
      text: [`Send these answers to ${question.from}?`, ...(summary.length ? summary : ["(nothing filled in)"])].join("\n"),
      buttons,
      acceptsReply: false,
    });
    const end = endOf(reply);
    if (end) return end;
    const typed = reply.kind === "reply" ? reply.text : "";
    const chosen = reply.kind === "button" ? reply.id : (buttonNamed(buttons, typed) ?? (/^\s*(y|yes|ok)\s*$/i.test(typed) ? SEND : DECLINE));
    if (chosen !== SEND) return { action: "decline", by: byOf(reply), reason: "the person declined" };
    by = byOf(reply);
  }
  return { action: "accept", values, by: by ?? { id: options.audience.requester.id, name: options.audience.requester.name } };
}

type StepReading = { end: QuestionAnswer } | { ok: true; value: FieldValue | undefined; by: Answerer } | { ok: false; error: string; by: Answerer };

/** Reads one step's reply for `field`: a value, a wrong answer, or the end of the whole question. */
function readStep(field: QuestionField, reply: PromptReply): StepReading {
  const end = endOf(reply);
  if (end) return { end };
  const by = byOf(reply)!;
  const text = reply.kind === "reply" ? reply.text : "";
  const buttons = buttonsFor(field);
  if (reply.kind === "button" && !buttons.some((b) => b.id === reply.id)) return { ok: false, error: "that button does not belong to this question", by };
  // A reply that names a button (its label) counts as its click, so a channel without buttons works too.
  const id = reply.kind === "button" ? reply.id : buttonNamed(buttons, text);
  if (id === DECLINE) return { end: { action: "decline", by, reason: "the person declined" } };
  if (id === SKIP) return field.required ? { ok: false, error: "this one cannot be skipped", by } : { ok: true, value: undefined, by };
  if (id === YES || id === NO) return { ok: true, value: id === YES, by };
  if (id?.startsWith("opt:") && field.type === "choice") {
    const option = field.options[Number(id.slice(4))];
    if (option) return { ok: true, value: option.value, by };
  }
  // "Use default" reads as an empty reply, which takes the default (checked like any answer).
  const read = readFieldReply(field, id === DEFAULT ? "" : text);
  return read.ok ? { ok: true, value: read.value, by } : { ok: false, error: read.error, by };
}

function endOf(reply: PromptReply): QuestionAnswer | undefined {
  if (reply.kind === "timeout") return { action: "cancel", reason: "no answer in time" };
  if (reply.kind === "cancelled") return { action: "cancel", reason: "the request was stopped" };
  return undefined;
}

function byOf(reply: PromptReply): Answerer | undefined {
  return reply.kind === "button" || reply.kind === "reply" ? reply.by : undefined;
}

/** The button whose label a reply names, ignoring case. */
function buttonNamed(buttons: PromptButton[], text: string): string | undefined {
  const wanted = text.trim().toLowerCase();
  return wanted ? buttons.find((b) => b.label.toLowerCase() === wanted)?.id : undefined;
}

/** The line that asks for one field. */
function fieldLine(field: QuestionField, position: string): string {
  const about = field.description && field.description !== field.label ? ` — ${field.description}` : "";
  const notes: string[] = [field.required ? "required" : "optional"];
  if (field.type === "text" && field.format) notes.push(FORMAT_WORDS[field.format]);
  if (field.type === "number") notes.push(numberRange(field));
  if (field.type === "choices") notes.push("list numbers or names, separated by commas");
  if (field.default !== undefined) notes.push(`default: ${describeFieldValue(field, field.default)}`);
  const options = field.type === "choice" || field.type === "choices" ? `\n${field.options.map((o, i) => `${i + 1}. ${o.label}`).join("\n")}` : "";
  return `${position}${field.label}${about} (${notes.filter(Boolean).join("; ")})${options}`;
}

const FORMAT_WORDS = { email: "an email address", uri: "a web address", date: "a date, YYYY-MM-DD", "date-time": "a date and time" } as const;

function numberRange(field: Extract<QuestionField, { type: "number" }>): string {
  const kind = field.integer ? "a whole number" : "a number";
  if (field.minimum !== undefined && field.maximum !== undefined) return `${kind} from ${field.minimum} to ${field.maximum}`;
  if (field.minimum !== undefined) return `${kind}, at least ${field.minimum}`;
  if (field.maximum !== undefined) return `${kind}, at most ${field.maximum}`;
  return kind;
}

function acceptsReply(field: QuestionField): boolean {
  return field.type === "text" || field.type === "number" || field.type === "choices" || (field.type === "choice" && field.options.length > OPTION_BUTTONS);
}

/** Options shown as buttons; a longer list is answered by number or name. */
const OPTION_BUTTONS = 10;

function buttonsFor(field: QuestionField): PromptButton[] {
  const buttons: PromptButton[] = [];
  if (field.type === "boolean") buttons.push({ id: YES, label: "Yes" }, { id: NO, label: "No" });
  if (field.type === "choice" && field.options.length <= OPTION_BUTTONS) buttons.push(...field.options.map((o, i) => ({ id: `opt:${i}`, label: o.label })));
  if (field.default !== undefined && field.type !== "boolean" && field.type !== "choice") buttons.push({ id: DEFAULT, label: "Use default" });
  if (!field.required) buttons.push({ id: SKIP, label: "Skip" });
  buttons.push({ id: DECLINE, label: "Decline" });
  return buttons;
}
