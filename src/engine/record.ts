/**
 * Step 5 — record. Owns turning dispatched calls into what the model sees next: one tool
 * message per original call, in the model's order; empty output as `(no output)`; output bounded
 * to maxToolResultChars (head and tail kept, with a marker naming how much was cut; very large
 * output saved to a file and referenced by path); receipts for successful executions; progress
 * events; after_tool_call hooks.
 */
import { mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ChatMessage } from "../model/types.ts";
import type { ReceiptRecord } from "../store/store.ts";
import type { ToolResult } from "../tools/tool.ts";
import type { DispatchedCall } from "./dispatch.ts";
import { isSynthetic } from "./synthetic.ts";
import { outputHash } from "../observe/receipts.ts";
import type { ReceiptInput, ReceiptSigner, ResolvedExecution, TurnState } from "./types.ts";

/**
 * The receipts of a turn's calls that are not in the store yet, for the turn's next write
 * (turn.ts). A receipt nobody is shown is signed then, with the others, for the time its call
 * finished: the signing is one short loop instead of work between every two model requests.
 */
export class PendingReceipts {
  readonly #signer: ReceiptSigner | undefined;
  readonly #signed: (receipts: ReceiptRecord[]) => void;
  #unsigned: ReceiptInput[] = [];

  /** `signed`: told of each batch as it is signed (the log names each call's receipt). */
  constructor(signer: ReceiptSigner | undefined, signed: (receipts: ReceiptRecord[]) => void = () => {}) {
    this.#signer = signer;
    this.#signed = signed;
  }

  add(input: ReceiptInput): void {
    this.#unsigned.push(input);
  }

  /** The pending receipts, signed; afterwards none is pending. */
  take(): ReceiptRecord[] {
    if (this.#unsigned.length === 0 || !this.#signer) return [];
    const inputs = this.#unsigned;
    this.#unsigned = [];
    const receipts = inputs.map((input) => this.#signer!.sign(input));
    this.#signed(receipts);
    return receipts;
  }
}

/** Keeps the head and tail of `text` within `max` characters, saying how much was cut. */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.length - max;
  const marker = `\n[… ${cut} characters cut from the middle of ${text.length} …]\n`;
  const keep = Math.max(0, max - marker.length);
  const head = Math.ceil(keep * 0.6);
  const tail = keep - head;
  return text.slice(0, head) + marker + (tail > 0 ? text.slice(text.length - tail) : "");
}

/** The text the model sees for a result, before bounding. */
export function resultText(result: ToolResult): string {
  if (result.success) return result.output.trim() === "" ? "(no output)" : result.output;
  if (isSynthetic(result)) return result.error ?? "the call was not run";
  const error = result.error ?? "the tool failed";
  const body = result.output && result.output.trim() !== "" ? `\n${result.output}` : "";
  return `Error: ${error}${body}`;
}

async function bound(exec: ResolvedExecution, state: TurnState, callId: string, text: string): Promise<string> {
  const { maxToolResultChars, spillToolResultChars, spillDir } = exec.knobs;
  if (text.length <= maxToolResultChars) return text;
  if (text.length > spillToolResultChars) {
    await mkdir(spillDir, { recursive: true });
    const file = path.join(spillDir, `${state.turnId}-${callId.replace(/[^A-Za-z0-9_-]/g, "_")}.txt`);
    await writeFile(file, text, { mode: 0o600 });
    const note = `\n[full output (${text.length} characters) saved to ${file}]`;
    return truncateMiddle(text, maxToolResultChars - note.length) + note;
  }
  return truncateMiddle(text, maxToolResultChars);
}

/**
 * Records a dispatched batch: tool messages in order, progress events, receipts, after hooks.
 * Receipts go into `unsaved`, for the turn's next write (turn.ts); a receipt shown in the chat is
 * signed and stored before its line goes out, so that whatever the chat shows can be verified.
 */
export async function recordResults(
  exec: ResolvedExecution,
  state: TurnState,
  dispatched: DispatchedCall[],
  unsaved: PendingReceipts,
  /** The sha256 hex of each output, by position, where the caller has it. */
  outputHashes: Array<string | undefined> = [],
): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [];
  for (const [i, d] of dispatched.entries()) {
    let receipt: string | undefined;
    if (d.ran && d.result.success && exec.receipts) {
      const plain = d.standing === "not-required";
      const args = plain ? d.params : { ...d.params, approved: d.standing };
      const input: ReceiptInput = {
        sessionKey: state.sessionKey, callId: d.call.id, tool: d.call.name, args, argsCanonical: plain ? d.argsCanonical : undefined,
        output: d.result.output, outputHash: outputHashes[i] ?? outputHash(d.result.output), at: Date.now(),
      };
      if (exec.receipts.show) {
        const signed = exec.receipts.sign(input);
        await exec.store.saveReceipts([signed]);
        receipt = signed.id;
      } else {
        // The hash stands for the output: a receipt waiting for the turn's next write does not keep it.
        unsaved.add({ ...input, output: "" });
      }
    }
    if (d.ran) {
      state.emit({
        type: "tool.finish", callId: d.call.id, tool: d.call.name, ms: d.ms, success: d.result.success,
        error: d.result.error, receipt: exec.receipts?.show ? receipt : undefined,
      });
      if (exec.hooks.hasAfter) await exec.hooks.runAfter({
        callId: d.call.id, tool: d.call.name, params: d.params, sessionKey: state.sessionKey,
        senderId: state.envelope.sender.id, channel: state.envelope.channel, result: d.result, ms: d.ms,
      });
    }
    const whole = resultText(d.result);
    let text = whole.length <= exec.knobs.maxToolResultChars ? whole : await bound(exec, state, d.call.id, whole);
    if (d.loopWarning) text += `\n[note: ${d.loopWarning}. Change your approach instead of repeating the call.]`;
    messages.push({ role: "tool", tool_call_id: d.call.id, content: text });
    exec.observer.emit({
      event: "result.recorded", traceId: state.traceId, sessionKey: state.sessionKey, tool: d.call.name, callId: d.call.id,
      ran: d.ran, success: d.result.success, chars: text.length, receipt,
    });
  }
  return messages;
}

/** Removes saved tool output older than `maxAgeMs` (run at start-up, so the folder does not grow forever). */
export async function pruneSpilledOutput(spillDir: string, maxAgeMs = 7 * 24 * 3600_000, now = Date.now()): Promise<number> {
  let removed = 0;
  const names = await readdir(spillDir).catch(() => [] as string[]);
  for (const name of names) {
    const file = path.join(spillDir, name);
    const info = await stat(file).catch(() => undefined);
    if (info?.isFile() && now - info.mtimeMs > maxAgeMs) {
      await rm(file, { force: true });
      removed++;
    }
  }
  return removed;
}
