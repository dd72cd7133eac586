/**
 * Reasoning written into the answer text as `<think>…</think>` (DeepSeek-R1 distills, Qwen and QwQ
 * served by Ollama, vLLM or llama.cpp without a reasoning parser). It is never an answer: it is
 * cut from the reply text, so a person never sees it and the history sent back never holds it
 * (DeepSeek and Qwen document that earlier reasoning must not be sent back), and held back from
 * the streamed text. A template that opens the block in the prompt leaves only `</think>` in the
 * output; everything before it is reasoning too.
 */
import { partialTagLength } from "./text-protocol.ts";

const OPEN = "<think>";
const CLOSE = "</think>";

/** A block that opens at the start of the text or of a line, up to its close (or the end: the model stopped while thinking). */
const BLOCK = /(^|\n)[ \t]*<think>[\s\S]*?(<\/think>|$)/g;

/** The reply text without its reasoning blocks. */
export function stripThinking(text: string): string {
  if (!text.includes(OPEN) && !text.includes(CLOSE)) return text;
  let rest = text;
  const close = rest.indexOf(CLOSE);
  const open = rest.indexOf(OPEN);
  if (close >= 0 && (open < 0 || close < open)) rest = rest.slice(close + CLOSE.length);
  rest = rest.replace(BLOCK, "$1");
  return rest.replace(/^\s+/, "").replace(/\n{3,}/g, "\n\n");
}

/** True when the text has a `</think>` with no `<think>` before it: the block was opened in the prompt. */
export function opensThinkingInPrompt(text: string): boolean {
  const close = text.indexOf(CLOSE);
  const open = text.indexOf(OPEN);
  return close >= 0 && (open < 0 || close < open);
}

/**
 * Wraps a text-delta callback so streamed reasoning blocks are not passed on. With `startsInside`
 * (the endpoint opens the block in the prompt), text is held until `</think>`; a reply that never
 * closes one is then let through whole at the end.
 */
export function hideThinking(onText: (text: string) => void, startsInside = false): { push(delta: string): void; flush(): void } {
  let state: "start" | "inside" | "outside" = startsInside ? "inside" : "start";
  let buffer = "";
  let held = "";
  let sawClose = false;
  const emit = (s: string) => {
    if (s) onText(s);
  };
  const drain = () => {
    for (;;) {
      if (state === "start") {
        const lead = buffer.trimStart();
        if (lead.startsWith(OPEN)) {
          buffer = lead.slice(OPEN.length);
          state = "inside";
          continue;
        }
        if (OPEN.startsWith(lead)) return;
        buffer = lead;
        state = "outside";
        continue;
      }
      if (state === "inside") {
        const end = buffer.indexOf(CLOSE);
        if (end < 0) {
          if (startsInside && !sawClose) held += buffer.slice(0, Math.max(0, buffer.length - (CLOSE.length - 1)));
          buffer = buffer.slice(Math.max(0, buffer.length - (CLOSE.length - 1)));
          return;
        }
        sawClose = true;
        held = "";
        buffer = buffer.slice(end + CLOSE.length).replace(/^\s+/, "");
        state = buffer ? "outside" : "start";
        continue;
      }
      const start = buffer.indexOf(`\n${OPEN}`);
      if (start >= 0) {
        emit(buffer.slice(0, start + 1));
        buffer = buffer.slice(start + 1 + OPEN.length);
        state = "inside";
        continue;
      }
      const keep = partialTagLength(buffer, `\n${OPEN}`);
      emit(buffer.slice(0, buffer.length - keep));
      buffer = buffer.slice(buffer.length - keep);
      return;
    }
  };
  return {
    push(delta) {
      buffer += delta;
      drain();
    },
    flush() {
      // Held because the block was expected to be open, but it never closed: it was the answer.
      if (state === "inside" && startsInside && !sawClose) emit(held + buffer);
      else if (state !== "inside") emit(buffer);
      buffer = "";
      held = "";
    },
  };
}

