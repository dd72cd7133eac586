/**
 * Execution receipts: an HMAC-SHA256 that proves a tool ran with these arguments and gave
 * this output at this time. The MAC covers the tool name, the canonical arguments (including
 * the runtime approval marker), the sha256 of the untruncated output and the timestamp.
 * A receipt is shown and checked as the string `gr1.<at>.<mac>`.
 */
import { createHmac, hash as digestOf, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "./canonical-json.ts";

const VERSION = "gr1";
const KEY_FILE = "receipt.key";

/**
 * The canonical JSON of arguments (in the MAC): see canonical-json.ts. Still exported from here for
 * the modules that import it from receipts; new code imports canonical-json.ts.
 */
export { canonicalJson } from "./canonical-json.ts";

/** sha256 hex of a tool's output (a string is hashed as UTF-8). */
export function outputHash(output: string | Uint8Array): string {
  return digestOf("sha256", output, "hex");
}

/**
 * The receipt key: the configured one when given, else the one kept in
 * `<dataDir>/receipt.key` (created with 32 random bytes and mode 0600 on first use).
 */
export function loadOrCreateReceiptKey(dataDir: string, configured?: string): Buffer {
  if (configured !== undefined) {
    if (configured.length < 16) throw new Error("receipts.key must be at least 16 characters");
    return Buffer.from(configured, "utf8");
  }
  const path = join(dataDir, KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(path, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  // A key file copied in with looser permissions is tightened: anyone who reads it can forge receipts.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const hex = readFileSync(path, "utf8").trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) {
    throw new Error(`${path} is not a receipt key (expected 64 hex characters); remove it to generate a new one`);
  }
  return Buffer.from(hex, "hex");
}

/** What a receipt vouches for. */
export interface ReceiptSubject {
  tool: string;
  args: unknown;
  /** The untruncated output. */
  output: string | Uint8Array;
}

/** A signed receipt, with the parts a store keeps to show what was signed. */
export interface SignedReceipt {
  /** HMAC-SHA256 hex. */
  mac: string;
  argsCanonical: string;
  outputHash: string;
  /** Milliseconds since the epoch. */
  at: number;
}

function macFor(key: Buffer, tool: string, argsCanonical: string, hash: string, at: number): string {
  // A JSON array keeps the fields apart, whatever characters they contain.
  const message = JSON.stringify([VERSION, tool, argsCanonical, hash, at]);
  return createHmac("sha256", key).update(message).digest("hex");
}

/**
 * Signs one successful execution. `argsCanonical` and `outputHash`, when given, are
 * `canonicalJson(args)` and `outputHash(output)` computed already.
 */
export function signReceipt(key: Buffer, input: ReceiptSubject & { at: number; argsCanonical?: string; outputHash?: string }): SignedReceipt {
  const argsCanonical = input.argsCanonical ?? canonicalJson(input.args);
  const hash = input.outputHash ?? outputHash(input.output);
  return { mac: macFor(key, input.tool, argsCanonical, hash, input.at), argsCanonical, outputHash: hash, at: input.at };
}

/** Whether `receipt` was signed with `key` for exactly this tool, arguments and output. */
export function verifyReceipt(key: Buffer, receipt: { mac: string; at: number }, subject: ReceiptSubject): boolean {
  if (!/^[0-9a-f]{64}$/.test(receipt.mac) || !Number.isSafeInteger(receipt.at)) return false;
  const expected = Buffer.from(macFor(key, subject.tool, canonicalJson(subject.args), outputHash(subject.output), receipt.at), "hex");
  return timingSafeEqual(expected, Buffer.from(receipt.mac, "hex"));
}

/** The receipt as one copyable string: `gr1.<at>.<mac>`. */
export function formatReceipt(receipt: { mac: string; at: number }): string {
  return `${VERSION}.${receipt.at}.${receipt.mac}`;
}

/** Reads a receipt string; throws an error saying what a receipt looks like when it is not one. */
export function parseReceipt(text: string): { at: number; mac: string } {
  const match = /^gr1\.(\d{1,16})\.([0-9a-f]{64})$/.exec(text.trim());
  const at = match ? Number(match[1]) : NaN;
  if (!match || !Number.isSafeInteger(at)) {
    throw new Error("not a Gatehouse receipt: expected gr1.<time>.<64 hex characters>");
  }
  return { at, mac: match[2] };
}
