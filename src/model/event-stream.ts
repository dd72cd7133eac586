/**
 * Reads a streamed Chat Completions response (server-sent events) straight from its body: one
 * loop over the bytes, lines split as the SSE format says (LF, CR or CRLF, even when a chunk ends
 * between CR and LF), the `data:` lines of one event joined, comments and other fields skipped,
 * `[DONE]` ending it. The events mean what they mean to the `openai` package's own stream: an
 * `error` event, or a payload with an `error` field, is an APIError; a payload that is not JSON is
 * a SyntaxError. An event the server did not close with a blank line before the body ended still
 * counts, as it does there.
 */
import { APIError } from "openai";

/** How the stream ended: with `[DONE]`, or with the end of the body and no `[DONE]`. */
export type StreamEnd = "done" | "ended";

/**
 * Hands each event's parsed payload to `onData`, in order, until `[DONE]` or the end of the body.
 * After `[DONE]` the rest of the body is read to its end (so the connection can be reused), or
 * cancelled if it does not end within a moment. A failed read (connection cut) rejects; an
 * abort of `signal` ends the stream ("ended", or the read's rejection). Anything else that stops
 * the reading early — `onData` throwing, a bad event — cancels the body.
 */
export async function readEventStream(response: Response, onData: (data: unknown) => void, signal?: AbortSignal): Promise<StreamEnd> {
  if (!response.body) throw new SyntaxError("Error reading response: the streamed response has no body.");
  const reader = response.body.getReader();
  // A read that an abort does not reject ends the body instead.
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", cancel, { once: true });
  let finished = false;
  try {
    const end = await readEvents(reader, (sse) => onData(payloadOf(sse, response.headers)));
    // A body left open after [DONE] is cancelled below.
    finished = end === "ended" || (await finishBody(reader));
    return end;
  } finally {
    signal?.removeEventListener("abort", cancel);
    if (!finished) cancel();
  }
}

async function readEvents(reader: ReadableStreamDefaultReader<Uint8Array>, onEvent: (sse: ServerSentEvent) => void): Promise<StreamEnd> {
  const decoder = new TextDecoder();
  const event = new EventBuilder();
  /** Ends the event being read; true when it was `[DONE]`. */
  const dispatch = (): boolean => {
    const sse = event.take();
    if (sse === undefined) return false;
    if (sse.data === "[DONE]") return true;
    onEvent(sse);
    return false;
  };
  let pending = "";
  let afterCR = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    let text = pending + decoder.decode(value, { stream: true });
    // A CR that ended the previous chunk ended its line: an LF right after it belongs to it.
    if (afterCR && text.startsWith("\n")) text = text.slice(1);
    let start = 0;
    let cr = text.indexOf("\r");
    let lf = text.indexOf("\n");
    while (cr !== -1 || lf !== -1) {
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      const line = text.slice(start, end);
      start = end === cr && lf === end + 1 ? end + 2 : end + 1;
      if (cr !== -1 && cr < start) cr = text.indexOf("\r", start);
      if (lf !== -1 && lf < start) lf = text.indexOf("\n", start);
      if (line !== "") event.line(line);
      else if (dispatch()) return "done";
    }
    afterCR = text.endsWith("\r");
    pending = text.slice(start);
  }
  const rest = pending + decoder.decode();
  if (rest) event.line(rest);
  return dispatch() ? "done" : "ended";
}

interface ServerSentEvent {
  event: string | undefined;
  data: string;
}

/** The fields of the event being read. */
class EventBuilder {
  #data: string[] = [];
  #event: string | undefined;

  line(line: string): void {
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#event = value;
  }

  /** The event read so far, which ends it; undefined when it had no data. */
  take(): ServerSentEvent | undefined {
    const taken = this.#data.length ? { event: this.#event, data: this.#data.length === 1 ? this.#data[0] : this.#data.join("\n") } : undefined;
    this.#data = [];
    this.#event = undefined;
    return taken;
  }
}

function payloadOf(sse: ServerSentEvent, headers: Headers): unknown {
  let data: unknown;
  try {
    data = JSON.parse(sse.data);
  } catch {
    throw new SyntaxError("Error reading response: malformed server-sent event JSON.");
  }
  const body = data as { error?: unknown } | null;
  if (sse.event === "error") throw new APIError(undefined, (body?.error ?? body) as object, undefined, headers);
  if (body && typeof body === "object" && body.error) throw new APIError(undefined, body.error as object, undefined, headers);
  return data;
}

/**
 * Reads what follows `[DONE]` to the end of the body, which servers send at once: a body read to its
 * end lets the connection be reused by the next request. A body still open after a short while is
 * cancelled instead of holding the answer up.
 */
async function finishBody(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), AFTER_DONE_WAIT_MS);
  });
  const rest = (async () => {
    while (!(await reader.read()).done);
    return true;
  })();
  try {
    return await Promise.race([rest, late]);
  } catch {
    // Cut after the reply was whole: nothing is lost, and nothing is left to cancel.
    return true;
  } finally {
    clearTimeout(timer);
    rest.catch(() => undefined);
  }
}

/** How long a body may stay open after `[DONE]` before it is cancelled. */
const AFTER_DONE_WAIT_MS = 50;
