/**
 * Short answers and progress lines of plain text skip the Markdown lexer (adapters/markdown-tokens.ts): for every
 * platform, what they render to must be exactly what the lexer's walk renders, and text with any
 * Markdown in it must still go through the lexer.
 */
import { describe, expect, it } from "vitest";
import { isPlainSentence, renderLexed, renderMarkdown, type BlockStyle } from "../../adapters/markdown-tokens.ts";
import { DISCORD_MARKDOWN } from "../../adapters/discord/markdown.ts";
import { SLACK_MRKDWN } from "../../adapters/slack/mrkdwn.ts";
import { TELEGRAM_HTML } from "../../adapters/telegram/html.ts";
import { MARKDOWN_SAMPLES } from "../support/markdown-samples.ts";

const STYLES: Record<string, BlockStyle> = { telegram: TELEGRAM_HTML, slack: SLACK_MRKDWN, discord: DISCORD_MARKDOWN };

const PLAIN = [
  "It is 2026-12-01T12:30:36.354Z right now.",
  "Done. The tool said: ok",
  "Price (approx): $5 — 10% off?",
  "Ünïcödé 漢字 🎉 ok",
  "Time is 12:30; see you at 13:00",
  "a - b = c, and x/y is 0.5",
  "The file is src/main.ts (397 lines)",
  "50% done, 2 of 4 steps; next: deploy",
  "{\"json\": 1} and ^caret and 'quotes' and \"double\"",
  "Tuesday, 1 December 2026 13:05",
  "Es ist 13:05 Uhr in Berlin (UTC+01:00).",
  "Q3 revenue: 1.2M, up 8.5 percent",
  "⏳ current_time: UTC",
  "⏳ current_time: UTC\n✅ current_time (0.0s)\n🔐 write_file: waiting for approval",
  "snake_case_name and x__y and 2_000",
  "line one\nline two",
];

const NOT_PLAIN = [
  ...Object.values(MARKDOWN_SAMPLES),
  "- an item", "+ an item", "1. first", "2) second", "---", "=== ", "# heading", "> quote", "| a | b |",
  "a *b* c", "a _b_ c", "a ~~b~~ c", "a `b` c", "see [x](y)", "AT&amp;T", "a < b", "a > b", "x\\y",
  "go to www.example.com", "see https://example.com", "mail ann@example.com",
  " leading space", "trailing space ", "tab\there", "bang! here", "",
  "a\n\nb", "a \nb", "a\n b", "a\n- b", "a\n---", "a\n===", "a\n1. b", "a\n# b", "a\n> b", "a\n",
  "_x", "x_", "x _y", "x_ y", "é_x", "(_x_)", "__init__", "carriage\rreturn",
];

describe("plain sentences skip the Markdown lexer", () => {
  for (const [platform, style] of Object.entries(STYLES)) {
    it(`render on ${platform} exactly as the lexer's walk renders them`, () => {
      for (const text of PLAIN) {
        expect(isPlainSentence(text), text).toBe(true);
        expect(renderMarkdown(text, style), text).toBe(renderLexed(text, style));
      }
    });
  }

  it("anything with Markdown, a blank or block-starting line, an underscore outside a word or surrounding spaces goes through the lexer", () => {
    for (const text of NOT_PLAIN) expect(isPlainSentence(text), JSON.stringify(text)).toBe(false);
  });
});
