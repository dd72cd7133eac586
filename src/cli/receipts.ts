/**
 * `gatehouse receipts verify <receipt> --tool NAME [--args JSON] --output-file FILE`: checks that a
 * receipt was issued by this bot's key for exactly that tool, arguments and output. Without
 * --args, the arguments recorded with the receipt in the store are used.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { loadConfig } from "../config/load.ts";
import { loadOrCreateReceiptKey, parseReceipt, verifyReceipt } from "../observe/receipts.ts";
import { openStore } from "../store/open-store.ts";
import { readArgs } from "./args.ts";

const USAGE = "usage: gatehouse receipts verify <receipt> --tool NAME [--args JSON] --output-file FILE\n";

export async function runReceipts(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "verify") {
    process.stderr.write(USAGE);
    return 2;
  }
  const { values, positionals } = readArgs(rest, {
    tool: { type: "string" },
    args: { type: "string" },
    "output-file": { type: "string" },
  });
  const receiptText = positionals[0];
  const tool = values.tool as string | undefined;
  const outputFile = values["output-file"] as string | undefined;
  if (!receiptText || !tool || !outputFile) {
    process.stderr.write(USAGE);
    return 2;
  }
  let receipt: { at: number; mac: string };
  try {
    receipt = parseReceipt(receiptText);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  const config = loadConfig();
  const keyFile = path.join(config.dataDir, "receipt.key");
  if (!config.receipts.key && !existsSync(keyFile)) {
    process.stderr.write(`No receipt key: neither receipts.key in the config nor ${keyFile} exists.\n`);
    return 2;
  }
  const key = loadOrCreateReceiptKey(config.dataDir, config.receipts.key);
  let args: unknown;
  if (typeof values.args === "string") {
    try {
      args = JSON.parse(values.args);
    } catch {
      process.stderr.write("--args must be JSON, e.g. --args '{\"command\":\"ls\"}'\n");
      return 2;
    }
  } else {
    const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    const stored = await store.getReceipt(receiptText.trim());
    await store.close();
    if (!stored) {
      process.stderr.write("This receipt is not in the store; pass the arguments with --args.\n");
      return 2;
    }
    args = JSON.parse(stored.argsCanonical);
  }
  let output: Buffer;
  try {
    output = readFileSync(outputFile);
  } catch (err) {
    // Not a verdict on the receipt (exit 1 would read as a forged one): the file could not be read.
    process.stderr.write(`--output-file: cannot read ${outputFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}\n`);
    return 2;
  }
  const ok = verifyReceipt(key, receipt, { tool, args: args as Record<string, unknown>, output });
  const when = new Date(receipt.at).toISOString();
  process.stdout.write(
    ok
      ? `valid: ${tool} ran at ${when} with exactly these arguments and this output.\n`
      : `INVALID: this receipt does not match ${tool} with these arguments and this output (or it was not issued by this key).\n`,
  );
  return ok ? 0 : 1;
}
