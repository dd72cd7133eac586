/**
 * Block Kit checks the emulator applies to chat.postMessage / chat.update, with Slack's
 * real limits, and the flattening a harness uses to read a card as a person sees it.
 */

/** Slack's limits for the blocks the bot uses. */
export const BLOCK_LIMITS = {
  blocks: 50,
  sectionText: 3000,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  actionId: 255,
  buttonValue: 2000,
} as const;

interface Button {
  label: string;
  actionId: string;
  value: string;
}

type Json = Record<string, unknown>;

function textOf(obj: unknown): string {
  if (obj && typeof obj === "object" && typeof (obj as Json).text === "string") return (obj as Json).text as string;
  return "";
}

/** Returns why Slack would refuse these blocks (`invalid_blocks: …`), or undefined when they are fine. */
export function blocksProblem(blocks: unknown): string | undefined {
  if (!Array.isArray(blocks)) return "blocks must be an array";
  if (blocks.length > BLOCK_LIMITS.blocks) return `more than ${BLOCK_LIMITS.blocks} blocks`;
  const actionIds = new Set<string>();
  for (const [i, raw] of blocks.entries()) {
    if (!raw || typeof raw !== "object") return `block ${i} is not an object`;
    const block = raw as Json;
    switch (block.type) {
      case "section":
      case "header": {
        const t = textOf(block.text);
        if (!t) return `block ${i}: text is required`;
        if (t.length > BLOCK_LIMITS.sectionText) return `block ${i}: text longer than ${BLOCK_LIMITS.sectionText}`;
        break;
      }
      case "context": {
        const els = block.elements;
        if (!Array.isArray(els) || els.length === 0 || els.length > BLOCK_LIMITS.contextElements) return `block ${i}: bad elements`;
        break;
      }
      case "divider":
        break;
      case "actions": {
        const els = block.elements;
        if (!Array.isArray(els) || els.length === 0 || els.length > BLOCK_LIMITS.actionsElements) return `block ${i}: bad elements`;
        for (const el of els as Json[]) {
          if (el.type !== "button") continue;
          const id = String(el.action_id ?? "");
          if (!id || id.length > BLOCK_LIMITS.actionId) return `block ${i}: action_id missing or longer than ${BLOCK_LIMITS.actionId}`;
          if (actionIds.has(id)) return `block ${i}: duplicate action_id ${id}`;
          actionIds.add(id);
          const label = textOf(el.text);
          if (!label || label.length > BLOCK_LIMITS.buttonText) return `block ${i}: button text missing or too long`;
          if (typeof el.value === "string" && el.value.length > BLOCK_LIMITS.buttonValue) return `block ${i}: value longer than ${BLOCK_LIMITS.buttonValue}`;
        }
        break;
      }
      default:
        return `block ${i}: unsupported type ${String(block.type)}`;
    }
  }
  return undefined;
}

/** The buttons a person can click in these blocks. */
export function buttonsOf(blocks: unknown[] | undefined): Button[] {
  const out: Button[] = [];
  for (const block of (blocks ?? []) as Json[]) {
    if (block.type !== "actions" || !Array.isArray(block.elements)) continue;
    for (const el of block.elements as Json[]) {
      if (el.type === "button") out.push({ label: textOf(el.text), actionId: String(el.action_id), value: String(el.value ?? "") });
    }
  }
  return out;
}

/** The text a person reads in these blocks, one line per block (buttons excluded). */
export function blocksText(blocks: unknown[] | undefined): string {
  const lines: string[] = [];
  for (const block of (blocks ?? []) as Json[]) {
    if (block.type === "section" || block.type === "header") lines.push(textOf(block.text));
    if (block.type === "context" && Array.isArray(block.elements)) lines.push((block.elements as unknown[]).map(textOf).join(" "));
  }
  return lines.join("\n");
}
