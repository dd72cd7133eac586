/** The channel contract against the Discord adapter (discord.js) and the Discord emulator. */
import { runChannelContract } from "./channel-contract.ts";
import { createDiscordHarness } from "../discord/harness.ts";

runChannelContract("discord", () => createDiscordHarness(), { userId: "200000000000000001", strangerId: "200000000000000002" });
