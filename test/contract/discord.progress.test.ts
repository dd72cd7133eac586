/** The progress contract against the Discord adapter and emulator (message edits: a route bucket of 5 per 5 s). */
import { runProgressContract } from "./progress-contract.ts";
import { createDiscordHarness, type DiscordHarness } from "../discord/harness.ts";

runProgressContract<DiscordHarness>("discord", {
  makeHarness: () => createDiscordHarness(),
  userId: "200000000000000001",
  edits: (h) => h.emulator.calls.filter((c) => c.route === "editMessage").map((c) => ({ at: c.at, limited: c.status === 429 })),
  typingCalls: (h) => h.emulator.calls.filter((c) => c.route === "typing").length,
  editBudget: { limit: 5, windowMs: 5000 },
  rawText: async (_h, message) => message.text,
  cardLink: /\[open the card\]\(https:\/\/discord\.com\/channels\/\d+\/\d+\/\d+\)/,
});
