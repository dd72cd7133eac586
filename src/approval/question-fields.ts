/**
 * Reading and checking the answer to one question field: a typed reply ("42", "yes", "2", "Piano,
 * Drums") becomes the field's value or a message saying what is wrong, and any value (from whatever
 * channel asked) can be checked against its field before it leaves the bot.
 */
import type { ChoiceOption, FieldValue, QuestionField } from "./questions.ts";

/** A reply read for a field: its value (undefined: left out, for an optional field), or what is wrong with it. */
export type FieldReading = { ok: true; value: FieldValue | undefined } | { ok: false; error: string };

const YES = ["y", "yes", "true", "1", "ok"];
const NO = ["n", "no", "false", "0"];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Reads a typed reply for `field`. An empty reply takes the default, or leaves an optional field out. */
export function readFieldReply(field: QuestionField, reply: string): FieldReading {
  const text = reply.trim();
  if (text === "") {
    if (field.default !== undefined) {
      const problem = checkFieldValue(field, field.default);
      return problem ? { ok: false, error: `the default does not fit (${problem}); give an answer` } : { ok: true, value: field.default };
    }
    return field.required ? { ok: false, error: "an answer is needed here" } : { ok: true, value: undefined };
  }
  let value: FieldValue | undefined;
  switch (field.type) {
    case "text":
      value = text;
      break;
    case "number": {
      const n = Number(text.replace(/,/g, ""));
      if (!Number.isFinite(n)) return { ok: false, error: `"${text}" is not a number` };
      value = n;
      break;
    }
    case "boolean":
      if (YES.includes(text.toLowerCase())) value = true;
      else if (NO.includes(text.toLowerCase())) value = false;
      else return { ok: false, error: "answer yes or no" };
      break;
    case "choice": {
      const option = optionNamed(field.options, text);
      if (!option) return { ok: false, error: `"${text}" is not one of the options; answer with its number or name` };
      value = option.value;
      break;
    }
    case "choices": {
      const picked: string[] = [];
      for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
        const option = optionNamed(field.options, part);
        if (!option) return { ok: false, error: `"${part}" is not one of the options; list their numbers or names, separated by commas` };
        if (!picked.includes(option.value)) picked.push(option.value);
      }
      value = picked;
      break;
    }
  }
  const problem = checkFieldValue(field, value);
  return problem ? { ok: false, error: problem } : { ok: true, value };
}

/** What is wrong with `value` for `field`, or undefined when it fits (a missing value fits an optional field). */
export function checkFieldValue(field: QuestionField, value: unknown): string | undefined {
  if (value === undefined) return field.required ? "an answer is needed here" : undefined;
  switch (field.type) {
    case "text": {
      if (typeof value !== "string") return "a text is needed here";
      const length = [...value].length;
      if (field.minLength !== undefined && length < field.minLength) return `use at least ${field.minLength} characters`;
      if (field.maxLength !== undefined && length > field.maxLength) return `use at most ${field.maxLength} characters`;
      return field.format ? formatProblem(field.format, value) : undefined;
    }
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return "a number is needed here";
      if (field.integer && !Number.isInteger(value)) return "a whole number is needed here";
      if (field.minimum !== undefined && value < field.minimum) return `the least allowed is ${field.minimum}`;
      if (field.maximum !== undefined && value > field.maximum) return `the most allowed is ${field.maximum}`;
      return undefined;
    case "boolean":
      return typeof value === "boolean" ? undefined : "answer yes or no";
    case "choice":
      return typeof value === "string" && field.options.some((o) => o.value === value) ? undefined : "pick one of the options";
    case "choices": {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && field.options.some((o) => o.value === v))) return "pick from the options";
      if (field.minItems !== undefined && value.length < field.minItems) return `pick at least ${field.minItems}`;
      if (field.maxItems !== undefined && value.length > field.maxItems) return `pick at most ${field.maxItems}`;
      return undefined;
    }
  }
}

/** A value as a person reads it in a summary: option labels, yes / no, lists joined. */
export function describeFieldValue(field: QuestionField, value: FieldValue): string {
  const label = (v: string) => ("options" in field ? field.options.find((o) => o.value === v)?.label : undefined) ?? v;
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.map(label).join(", ");
  return typeof value === "string" ? label(value) : String(value);
}

/** The option a reply names: by its number (1-based), its label or its value, ignoring case. */
function optionNamed(options: ChoiceOption[], text: string): ChoiceOption | undefined {
  if (/^\d+$/.test(text)) {
    const byNumber = options[Number(text) - 1];
    if (byNumber) return byNumber;
  }
  const wanted = text.toLowerCase();
  return options.find((o) => o.label.toLowerCase() === wanted) ?? options.find((o) => o.value.toLowerCase() === wanted);
}

function formatProblem(format: NonNullable<Extract<QuestionField, { type: "text" }>["format"]>, value: string): string | undefined {
  switch (format) {
    case "email":
      return EMAIL.test(value) ? undefined : "an email address is needed here (name@example.com)";
    case "uri":
      return URL.canParse(value) && /^[a-z][a-z0-9+.-]*:/i.test(value) ? undefined : "a full address is needed here (https://…)";
    case "date": {
      const day = DATE.test(value) ? new Date(`${value}T00:00:00Z`) : undefined;
      // A day past the month's end rolls over into the next month: it reads back differently.
      const valid = day && !Number.isNaN(day.getTime()) && day.toISOString().startsWith(value);
      return valid ? undefined : "a date is needed here, as YYYY-MM-DD";
    }
    case "date-time":
      return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) && !Number.isNaN(Date.parse(value))
        ? undefined
        : "a date and time is needed here, as YYYY-MM-DDTHH:MM:SSZ";
  }
}
