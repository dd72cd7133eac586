/** The /always contract against the Telegram adapter (grammY, long polling) and the Telegram emulator. */
import { runAlwaysContract } from "./always-contract.ts";
import { createTelegramHarness } from "../telegram/harness.ts";
import { withPacing } from "../support/fast-pacing.ts";

runAlwaysContract(
  "telegram",
  async () => withPacing(await createTelegramHarness({ emulator: { limits: { groupPerMinute: 1000 } } }), 100),
  { userId: "4242", strangerId: "4343" },
);
