/** An MCP server's question in a Discord thread, through discord.js and the emulator. */
import { runQuestionsContract } from "../contract/questions-contract.ts";
import { createDiscordHarness } from "./harness.ts";

runQuestionsContract("Discord", () => createDiscordHarness(), { channel: "discord", requester: "200000000000000001", stranger: "200000000000000002" });
