/**
 * Slack's rules for the control characters of a message's mrkdwn `text`, and what a person then
 * reads. Slack does not refuse a message that breaks them — it shows it wrong (a bare `<` eats the
 * text up to the next `>`, `<!channel>` pings everyone, `&foo;` is shown as written) — so tests use
 * this check to see that what the bot sent reads as meant.
 *
 * - `&` appears only as `&amp;`, `&lt;` or `&gt;`;
 * - `<` opens a link (`<https://…>`, `<https://…|label>`, `<mailto:…>`) or a mention / channel /
 *   special command (`<@U…>`, `<#C…>`, `<!here>`), closed by the next `>`; a link's URL holds no
 *   whitespace;
 * - `>` appears bare only at the start of a line (a quote).
 */

export type MrkdwnResult = { ok: true; visible: string } | { ok: false; description: string };

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">" };
const LINK = /^((?:https?:\/\/|mailto:)[^\s|]+)(?:\|([\s\S]*))?$/;
const CONTROL = /^[@#!][^\s<>]*$/;

/** Checks Slack mrkdwn text; returns the text a person reads (links as their labels, entities decoded). */
export function checkMrkdwn(text: string): MrkdwnResult {
  let visible = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "&") {
      const entity = Object.keys(ENTITIES).find((e) => text.startsWith(e, i));
      if (!entity) return { ok: false, description: `bare "&" at ${i}: ${JSON.stringify(text.slice(i, i + 12))}` };
      visible += ENTITIES[entity];
      i += entity.length;
      continue;
    }
    if (ch === ">") {
      const lineStart = i === 0 || text[i - 1] === "\n";
      if (!lineStart) return { ok: false, description: `bare ">" inside a line at ${i}` };
      i += 1;
      if (text[i] === " ") i += 1;
      continue;
    }
    if (ch !== "<") {
      visible += ch;
      i += 1;
      continue;
    }
    const close = text.indexOf(">", i);
    const inner = close < 0 ? "" : text.slice(i + 1, close);
    if (close < 0 || inner.includes("<") || inner.includes("\n")) return { ok: false, description: `"<" at ${i} opens no link or mention` };
    const link = LINK.exec(inner);
    if (link) visible += (link[2] ?? link[1]!).replace(/&(amp|lt|gt);/g, (e) => ENTITIES[e]!);
    else if (CONTROL.test(inner)) visible += inner;
    else return { ok: false, description: `"<${inner}>" is neither a link nor a mention` };
    i = close + 1;
  }
  return { ok: true, visible };
}
