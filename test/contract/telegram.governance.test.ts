/** Approval governance against the Telegram adapter (grammY) and the Telegram emulator. */
import { runGovernanceContract } from "./governance-contract.ts";
import { createTelegramHarness, HARNESS_GROUP, type TelegramHarness } from "../telegram/harness.ts";
import { withPacing } from "../support/fast-pacing.ts";

const APPROVALS_CHAT = -1002000;

runGovernanceContract(
  "telegram",
  async () => {
    const harness = await createTelegramHarness({ emulator: { limits: { groupPerMinute: 1000 } } });
    harness.emulator.state.chats.set(APPROVALS_CHAT, { id: APPROVALS_CHAT, type: "supergroup", title: "Ops approvals" });
    return withPacing(harness, 100);
  },
  {
    channel: "telegram", requester: "4242", approverA: "4343", approverB: "4444", approversConversation: String(APPROVALS_CHAT),
    failGroupCheck(h) {
      (h as TelegramHarness).emulator.failNext("getChatMember", { status: 500 });
    },
    async grantGroup(h, userId) {
      (h as TelegramHarness).emulator.setChatMember(HARNESS_GROUP, { id: Number(userId) }, "administrator");
      return { chatAdmins: true };
    },
  },
);
