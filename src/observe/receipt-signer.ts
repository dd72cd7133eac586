/**
 * The receipt signer the engine uses when receipts are enabled: signs a successful execution with
 * the bot's key into a receipt record, whose id (`gr1.<time>.<mac>`) is the copyable receipt.
 */
import type { Config } from "../config/schema.ts";
import type { ReceiptSigner } from "../engine/types.ts";
import { formatReceipt, loadOrCreateReceiptKey, signReceipt } from "./receipts.ts";

export function createReceiptSigner(config: Config): ReceiptSigner {
  const key = loadOrCreateReceiptKey(config.dataDir, config.receipts.key);
  return {
    show: config.receipts.show,
    sign(input) {
      const at = Date.now();
      const signed = signReceipt(key, { tool: input.tool, args: input.args, argsCanonical: input.argsCanonical, output: input.output, outputHash: input.outputHash, at });
      return {
        id: formatReceipt(signed), at, sessionKey: input.sessionKey, callId: input.callId, tool: input.tool,
        argsCanonical: signed.argsCanonical, outputHash: signed.outputHash, mac: signed.mac,
      };
    },
  };
}
