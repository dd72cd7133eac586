/** The /always contract against the Discord adapter (discord.js) and the Discord emulator. */
import { runAlwaysContract } from "./always-contract.ts";
import { createDiscordHarness } from "../discord/harness.ts";

runAlwaysContract("discord", () => createDiscordHarness(), { userId: "200000000000000001", strangerId: "200000000000000002" });
