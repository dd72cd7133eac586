/** An MCP server's question in a Slack thread, through Bolt and the emulator. */
import { runQuestionsContract } from "../contract/questions-contract.ts";
import { ALICE, createSlackHarness } from "./harness.ts";
import { withPacing } from "../support/fast-pacing.ts";

runQuestionsContract("Slack", async () => withPacing(await createSlackHarness(), 50), { channel: "slack", requester: ALICE, stranger: "U0BOB" });
