/**
 * The receipt signer the engine uses when receipts are enabled: signs a successful execution with
 * the bot's key into a receipt record, whose id (`gr1.<time>.<mac>`) is the copyable receipt.
 */
import type { Config } from "../config/schema.ts";
import type { ReceiptSigner } from "../engine/types.ts";
import { formatReceipt, loadOrCreateReceiptKey, signReceipt } from "./receipts.ts";

export function createReceiptSigner(config: Config): ReceiptSigner {
  const key = loadOrCreateReceiptKey(config.dataDir, config.receipts.key);
  // Two executions with the same tool, arguments and output (two chats asking the time in the same
  // millisecond) would otherwise get one receipt id between them: each signing takes its own
  // millisecond, a later one when that one is taken.
  let last = 0;
  return {
    show: config.receipts.show,
    sign(input) {
      const at = (last = Math.max(input.at ?? Date.now(), last + 1));
      const signed = signReceipt(key, { tool: input.tool, args: input.args, argsCanonical: input.argsCanonical, output: input.output, outputHash: input.outputHash, at });
      return {
        id: formatReceipt(signed), at, sessionKey: input.sessionKey, callId: input.callId, tool: input.tool,
        argsCanonical: signed.argsCanonical, outputHash: signed.outputHash, mac: signed.mac,
      };
    },
  };
}
