/** The /always contract against the Slack adapter (Bolt over Socket Mode) and the Slack emulator. */
import { runAlwaysContract } from "./always-contract.ts";
import { ALICE, createSlackHarness } from "../slack/harness.ts";
import { withPacing } from "../support/fast-pacing.ts";

runAlwaysContract("slack", async () => withPacing(await createSlackHarness(), 100), { userId: ALICE, strangerId: "U0BOB" });
