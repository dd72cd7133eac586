/** Approval governance against the Discord adapter (discord.js) and the Discord emulator. */
import { ChannelType } from "discord.js";
import { runGovernanceContract } from "./governance-contract.ts";
import { createDiscordHarness, type DiscordHarness } from "../discord/harness.ts";

const APPROVALS_CHANNEL = "300000000000000099";

runGovernanceContract(
  "discord",
  async () => {
    const harness = await createDiscordHarness();
    const { state } = harness.emulator;
    state.channels.set(APPROVALS_CHANNEL, { id: APPROVALS_CHANNEL, type: ChannelType.GuildText, name: "ops-approvals", guild_id: state.guildId });
    return harness;
  },
  {
    channel: "discord", requester: "200000000000000001", approverA: "200000000000000002", approverB: "200000000000000003",
    approversConversation: APPROVALS_CHANNEL,
    failGroupCheck(h) {
      // discord.js tries a 5xx again three times: every try fails.
      (h as DiscordHarness).emulator.failNext("getGuildMember", { status: 503 }, 4);
    },
    async grantGroup(h, userId) {
      const { emulator } = h as DiscordHarness;
      const role = await emulator.createRole("sre");
      emulator.setMemberRole(userId, role);
      return { roles: [role] };
    },
  },
);
