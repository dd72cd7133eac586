/**
 * MCP elicitation (form mode): a server asks the person behind the running call for some values.
 * The requested schema (flat, primitive properties: string, number, integer, boolean, single and
 * multiple choice) becomes a Question asked through the turn's questioner; the answer is checked
 * against the schema again before it goes back as `accept`, `decline` or `cancel`.
 */
import type { Logger } from "pino";
import { checkFieldValue } from "../../approval/question-fields.ts";
import { questionKind, type ChoiceOption, type FieldValue, type Question, type QuestionAnswer, type QuestionField } from "../../approval/questions.ts";

/** The part of an `elicitation/create` request (form mode) read here. */
export interface ElicitationParams {
  message: string;
  requestedSchema: { properties: Record<string, unknown>; required?: string[] };
}

/** What goes back to the server (a type, not an interface: the SDK's result type has an index signature). */
export type ElicitationResult = {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, FieldValue>;
};

const FORMATS = ["email", "uri", "date", "date-time"] as const;

/** `MCP server "github"`: how a server is named to a person. */
export function serverLabel(server: string): string {
  return `MCP server "${server}"`;
}

/** The question for a request, or why it cannot be asked (a required property the bot cannot show). */
export function questionOf(server: string, params: ElicitationParams): { question: Question } | { unsupported: string } {
  const required = new Set(params.requestedSchema.required ?? []);
  const fields: QuestionField[] = [];
  for (const [name, definition] of Object.entries(params.requestedSchema.properties ?? {})) {
    const field = fieldOf(name, record(definition), required.has(name));
    if (field) fields.push(field);
    else if (required.has(name)) return { unsupported: `the required field "${name}" is of a kind the bot cannot ask for` };
  }
  if (fields.length === 0) return { unsupported: "the request asks for no field the bot can show" };
  return { question: { kind: questionKind(fields), from: serverLabel(server), title: params.message.trim() || "(no text)", fields } };
}

/** The answer as the server gets it: accepted values that fit the schema, or decline / cancel. */
export function resultOf(question: Question, answer: QuestionAnswer, log: Logger): ElicitationResult {
  if (answer.action !== "accept") return { action: answer.action };
  const content: Record<string, FieldValue> = {};
  for (const field of question.fields) {
    const value = answer.values[field.name];
    const problem = checkFieldValue(field, value);
    if (problem) {
      // Only a channel's bug gets here (the flow checks every answer); the field is named, its value never logged.
      log.warn({ field: field.name, problem }, "an elicitation answer did not fit the server's schema; cancelled");
      return { action: "cancel" };
    }
    if (value !== undefined) content[field.name] = value;
  }
  return { action: "accept", content };
}

/** Answers one elicitation request of `server` by asking through `ask`. */
export async function answerElicitation(
  server: string,
  params: ElicitationParams,
  ask: (question: Question) => Promise<QuestionAnswer>,
  log: Logger,
): Promise<ElicitationResult> {
  const made = questionOf(server, params);
  if ("unsupported" in made) {
    log.warn({ reason: made.unsupported }, "MCP elicitation declined");
    return { action: "decline" };
  }
  const answer = await ask(made.question);
  const result = resultOf(made.question, answer, log);
  log.info({ action: result.action, fields: made.question.fields.length, answered: Object.keys(result.content ?? {}).length }, "MCP elicitation answered");
  return result;
}

function fieldOf(name: string, def: Record<string, unknown>, required: boolean): QuestionField | undefined {
  const base = { name, label: text(def.title) ?? name, description: text(def.description), required };
  switch (def.type) {
    case "string": {
      const options = optionsOf(def);
      if (options) {
        const fallback = text(def.default);
        return { ...base, type: "choice", options, default: options.some((o) => o.value === fallback) ? fallback : undefined };
      }
      const format = FORMATS.find((f) => f === def.format);
      return { ...base, type: "text", format, minLength: count(def.minLength), maxLength: count(def.maxLength), default: text(def.default) };
    }
    case "number":
    case "integer":
      return {
        ...base, type: "number", integer: def.type === "integer", minimum: num(def.minimum), maximum: num(def.maximum),
        default: num(def.default),
      };
    case "boolean":
      return { ...base, type: "boolean", default: typeof def.default === "boolean" ? def.default : undefined };
    case "array": {
      const options = optionsOf(record(def.items));
      if (!options) return undefined;
      const fallback = Array.isArray(def.default) ? def.default.filter((v): v is string => options.some((o) => o.value === v)) : undefined;
      return { ...base, type: "choices", options, minItems: count(def.minItems), maxItems: count(def.maxItems), default: fallback?.length ? fallback : undefined };
    }
    default:
      return undefined;
  }
}

/** Options from `enum` (with the legacy `enumNames`) or from `oneOf` / `anyOf` of `{ const, title }`. */
function optionsOf(def: Record<string, unknown>): ChoiceOption[] | undefined {
  if (Array.isArray(def.enum)) {
    const names = Array.isArray(def.enumNames) ? def.enumNames : [];
    const options = def.enum.filter((v): v is string => typeof v === "string").map((value, i) => ({ value, label: text(names[i]) ?? value }));
    return options.length ? options : undefined;
  }
  const titled = Array.isArray(def.oneOf) ? def.oneOf : Array.isArray(def.anyOf) ? def.anyOf : undefined;
  if (!titled) return undefined;
  const options = titled.map(record).filter((o) => typeof o.const === "string").map((o) => ({ value: o.const as string, label: text(o.title) ?? (o.const as string) }));
  return options.length ? options : undefined;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}
