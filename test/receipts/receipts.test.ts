import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/observe/canonical-json.ts";
import {
  formatReceipt,
  loadOrCreateReceiptKey,
  parseReceipt,
  signReceipt,
  verifyReceipt,
} from "../../src/observe/receipts.ts";

const key = Buffer.from("0123456789abcdef0123456789abcdef");
const execution = { tool: "shell", args: { command: "ls", approved: true }, output: "a.txt\nb.txt\n" };
const at = 1_700_000_000_000;

describe("canonical JSON", () => {
  it("sorts keys at every depth and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: "x" } })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it("gives the same text for the same value whatever the key order", () => {
    expect(canonicalJson({ approved: true, command: "ls" })).toBe(canonicalJson({ command: "ls", approved: true }));
  });

  it("drops undefined members like JSON does", () => {
    expect(canonicalJson({ a: undefined, b: null })).toBe('{"b":null}');
  });
});

describe("receipts", () => {
  const signed = signReceipt(key, { ...execution, at });

  it("verifies a receipt for the exact execution it was signed for", () => {
    expect(signed.argsCanonical).toBe('{"approved":true,"command":"ls"}');
    expect(signed.outputHash).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyReceipt(key, signed, execution)).toBe(true);
  });

  it("verifies when the arguments are given in another key order", () => {
    expect(verifyReceipt(key, signed, { ...execution, args: { approved: true, command: "ls" } })).toBe(true);
  });

  it("verifies an output given as the bytes of the file it was saved to", () => {
    expect(verifyReceipt(key, signed, { ...execution, output: Buffer.from(execution.output) })).toBe(true);
  });

  it("fails when the tool name changed", () => {
    expect(verifyReceipt(key, signed, { ...execution, tool: "read_file" })).toBe(false);
  });

  it("fails when the arguments changed, including the approval marker", () => {
    expect(verifyReceipt(key, signed, { ...execution, args: { command: "ls -la", approved: true } })).toBe(false);
    expect(verifyReceipt(key, signed, { ...execution, args: { command: "ls" } })).toBe(false);
  });

  it("fails when the output changed", () => {
    expect(verifyReceipt(key, signed, { ...execution, output: "a.txt\n" })).toBe(false);
  });

  it("fails when the timestamp changed", () => {
    expect(verifyReceipt(key, { ...signed, at: at + 1 }, execution)).toBe(false);
  });

  it("fails when the mac changed", () => {
    const flipped = (signed.mac[0] === "0" ? "1" : "0") + signed.mac.slice(1);
    expect(verifyReceipt(key, { ...signed, mac: flipped }, execution)).toBe(false);
    expect(verifyReceipt(key, { ...signed, mac: "abc" }, execution)).toBe(false);
  });

  it("fails with another key", () => {
    expect(verifyReceipt(Buffer.from("another key, 32 bytes long......"), signed, execution)).toBe(false);
  });

  it("round-trips through the receipt string", () => {
    const text = formatReceipt(signed);
    expect(text).toBe(`gr1.${at}.${signed.mac}`);
    expect(verifyReceipt(key, parseReceipt(` ${text}\n`), execution)).toBe(true);
  });

  it("explains what a receipt looks like when given something else", () => {
    expect(() => parseReceipt("gr1.notatime.abc")).toThrow(/expected gr1\.<time>\.<64 hex characters>/);
  });
});

describe("receipt key", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("generates a key in the data folder readable only by its owner, and reuses it", () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-receipts-"));
    const dataDir = join(dir, "data");
    const first = loadOrCreateReceiptKey(dataDir);
    expect(first).toHaveLength(32);
    expect(statSync(join(dataDir, "receipt.key")).mode & 0o777).toBe(0o600);
    expect(loadOrCreateReceiptKey(dataDir).equals(first)).toBe(true);
  });

  it("tightens a key file someone left readable by others", () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-receipts-"));
    writeFileSync(join(dir, "receipt.key"), "ab".repeat(32));
    chmodSync(join(dir, "receipt.key"), 0o644);
    expect(loadOrCreateReceiptKey(dir).toString("hex")).toBe("ab".repeat(32));
    expect(statSync(join(dir, "receipt.key")).mode & 0o777).toBe(0o600);
  });

  it("uses the configured key and writes no file", () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-receipts-"));
    expect(loadOrCreateReceiptKey(dir, "a configured receipt key").toString()).toBe("a configured receipt key");
    expect(() => readFileSync(join(dir!, "receipt.key"))).toThrow();
  });

  it("refuses a damaged key file with a message saying how to recover", () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-receipts-"));
    writeFileSync(join(dir, "receipt.key"), "not hex", { mode: 0o600 });
    expect(() => loadOrCreateReceiptKey(dir!)).toThrow(/remove it to generate a new one/);
  });
});
