/** The channel contract against the Telegram adapter (grammY, long polling) and the Telegram emulator. */
import { runChannelContract } from "./channel-contract.ts";
import { createTelegramHarness } from "../telegram/harness.ts";
import { withPacing } from "../support/fast-pacing.ts";

// The emulator keeps Telegram's per-chat burst limit; the per-group minute budget is raised so a
// whole suite fits in one group.
runChannelContract(
  "telegram",
  async () => withPacing(await createTelegramHarness({ emulator: { limits: { groupPerMinute: 1000 } } }), 100),
  { userId: "4242", strangerId: "4343" },
);
