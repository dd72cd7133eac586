/**
 * An MCP server's question (elicitation) in a chat thread, through the FULL bot and a platform
 * harness: each field is a message in the thread with buttons; the requester answers with a click
 * and with a reply in the thread (no mention needed there); someone else's click is refused; the
 * server gets the answers. Each threaded platform's questions test calls `runQuestionsContract`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { McpConfigSchema } from "../../src/tools/mcp/schema.ts";
import { startTestBot, eventually, type TestBot } from "../support/bot.ts";
import { callTools, messagesOf, routeModel } from "../support/scenario.ts";
import { FIXTURE_SERVER } from "../mcp/helpers.ts";
import type { ChannelHarness, SeenMessage } from "./harness.ts";

export interface QuestionsOptions {
  channel: "slack" | "discord";
  requester: string;
  stranger: string;
}

const withButton = (label: string) => (m: SeenMessage) => m.buttons.some((b) => b.label.includes(label));

export function runQuestionsContract(name: string, makeHarness: () => Promise<ChannelHarness>, o: QuestionsOptions): void {
  describe(`an MCP server's question in a ${name} thread`, () => {
    let harness: ChannelHarness | undefined;
    let tb: TestBot | undefined;
    afterEach(async () => {
      await tb?.close();
      await harness?.close();
      tb = harness = undefined;
    });

    it("is answered by the requester with a click and a thread reply, and the server gets the answers", async () => {
      const h = (harness = await makeHarness());
      tb = await startTestBot({
        adapters: [h.adapter],
        configure: (config) => {
          config.tools.profile = "full";
          config.approval.timeoutMs = 15_000;
          config[o.channel].access = { ...config[o.channel].access, users: ["*"], conversations: ["*"] };
          config.mcp = McpConfigSchema.parse({ servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnlyTools: ["deploy"] } } });
        },
      });
      routeModel(tb.model, [{ when: "deploy the build", first: callTools({ name: "fx__deploy" }), then: { text: "The deploy tool has answered." } }]);
      const posted = await h.userSays("please deploy the build", { userId: o.requester });
      const thread = () => h.botMessages(posted.conversationId, posted.threadId);
      const choice = await eventually(async () => (await thread()).find(withButton("staging")), "the environment question");
      const staging = choice.buttons.find((b) => b.label.includes("staging"))!.payload;
      expect((await h.click(choice, staging, o.stranger)).shownToClicker).toMatch(/may answer this; nothing changed/);
      await h.click(choice, staging, o.requester);
      await eventually(async () => (await thread()).find((m) => m.text.includes("Release note")), "the note question");
      await h.userSays("hotfix for the login page", { userId: o.requester, threadId: posted.threadId, mention: false });
      const review = await eventually(async () => (await thread()).find(withButton("Send")), "the review of the answers");
      await h.click(review, review.buttons.find((b) => b.label.includes("Send"))!.payload, o.requester);
      await eventually(async () => (await thread()).find((m) => m.text.includes("The deploy tool has answered.")), "the answer");
      const toolResult = messagesOf(tb.model.requests.at(-1)!).filter((m) => m.role === "tool").map((m) => String(m.content)).join("\n");
      expect(toolResult).toContain("deploying to staging: hotfix for the login page");
    });
  });
}
