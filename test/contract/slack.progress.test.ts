/** The progress contract against the Slack adapter and emulator (chat.update: about 50 a minute per workspace). */
import { runProgressContract } from "./progress-contract.ts";
import { ALICE, createSlackHarness, type SlackHarness } from "../slack/harness.ts";

runProgressContract<SlackHarness>("slack", {
  makeHarness: () => createSlackHarness(),
  userId: ALICE,
  edits: (h) => h.emulator.world.calls.filter((c) => c.method === "chat.update").map((c) => ({ at: c.at, limited: c.result === "ratelimited" || c.result === "429" })),
  typingCalls: (h) => h.emulator.world.calls.filter((c) => c.method === "assistant.threads.setStatus" && c.args.status !== "").length,
  editBudget: { limit: 50, windowMs: 60_000 },
  rawText: async (_h, message) => message.text,
  cardLink: /<https:\/\/emulated\.slack\.com\/archives\/C0GENERAL\/p\d+\?thread_ts=[\d.]+&cid=C0GENERAL\|open the card>/,
});
