/** Approval governance against the Slack adapter and the Slack emulator. */
import { runGovernanceContract } from "./governance-contract.ts";
import { ALICE, createSlackHarness, type SlackHarness } from "../slack/harness.ts";
import { withPacing } from "../support/fast-pacing.ts";

const users = [
  { id: ALICE, name: "alice", realName: "Alice Example" },
  { id: "U0BOB", name: "bob", realName: "Bob Example" },
  { id: "U0CAROL", name: "carol", realName: "Carol Example" },
];

runGovernanceContract("slack", async () => withPacing(await createSlackHarness({ emulator: { users, channels: ["C0APPROVALS"] } }), 100), {
  channel: "slack", requester: ALICE, approverA: "U0BOB", approverB: "U0CAROL", approversConversation: "C0APPROVALS",
  failGroupCheck(h) {
    (h as SlackHarness).emulator.failNext("usergroups.users.list", { error: "internal_error" });
  },
  async grantGroup(h, userId) {
    (h as SlackHarness).emulator.world.userGroups.create({ id: "S0SRE", name: "SRE", handle: "sre", users: [userId] });
    return { groups: ["S0SRE"] };
  },
});
