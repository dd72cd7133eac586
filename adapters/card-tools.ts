/**
 * The tool each posted approval card asks about, remembered by the adapter so that a "Deny with
 * reason…" form can say what is being denied. Bounded; a card posted before a restart is named
 * "this request" by the forms.
 */
import type { OutboundPort } from "../src/ports.ts";
import { LruMap } from "../src/lru-map.ts";

/** Cards whose tool a form can name: the ones posted since the start, the most recent kept. */
const REMEMBERED_CARDS = 10_000;

/** Makes `port` remember the tool of each card it posts (approval id → tool). */
export function rememberCardTools(port: OutboundPort): LruMap<string, string> {
  const tools = new LruMap<string, string>({ max: REMEMBERED_CARDS });
  const post = port.requestApproval?.bind(port);
  if (post) {
    port.requestApproval = async (target, card) => {
      const sent = await post(target, card);
      tools.set(card.approvalId, card.tool);
      return sent;
    };
  }
  return tools;
}
