/**
 * The receipt signer the engine uses when receipts are enabled: signs a successful execution with
 * the bot's key, stores the receipt, and returns its id (`gr1.<time>.<mac>`).
 */
import type { Config } from "../config/schema.ts";
import type { ReceiptSigner } from "../engine/types.ts";
import type { Store } from "../store/store.ts";
import { formatReceipt, loadOrCreateReceiptKey, signReceipt } from "./receipts.ts";

export function createReceiptSigner(config: Config, store: Store): ReceiptSigner {
  const key = loadOrCreateReceiptKey(config.dataDir, config.receipts.key);
  return {
    show: config.receipts.show,
    async sign(input) {
      const at = Date.now();
      const signed = signReceipt(key, { tool: input.tool, args: input.args, output: input.output, at });
      const id = formatReceipt(signed);
      await store.saveReceipt({
        id, at, sessionKey: input.sessionKey, callId: input.callId, tool: input.tool,
        argsCanonical: signed.argsCanonical, outputHash: signed.outputHash, mac: signed.mac,
      });
      return id;
    },
  };
}
