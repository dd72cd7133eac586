/** The channel contract against the in-memory channel (the reference the platform adapters are held to). */
import { runChannelContract } from "./channel-contract.ts";
import { createMemoryHarness, MEMORY_USER } from "../support/memory-channel.ts";

runChannelContract("memory", async () => createMemoryHarness({ capabilities: { maxMessageChars: 2000 } }), {
  userId: MEMORY_USER,
  strangerId: "u-mallory",
});
