/**
 * An MCP server's question (elicitation) in a Discord thread, through discord.js and the emulator: each
 * field is a message in the thread with buttons; the requester answers with a click, and with a
 * reply in the thread (no mention needed there); someone else's click is refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import { McpConfigSchema } from "../../src/tools/mcp/schema.ts";
import { startTestBot, eventually, type TestBot } from "../support/bot.ts";
import { callTools, messagesOf, routeModel } from "../support/scenario.ts";
import { FIXTURE_SERVER } from "../mcp/helpers.ts";
import type { SeenMessage } from "../contract/harness.ts";
import { createDiscordHarness, type DiscordHarness } from "./harness.ts";

const ALICE = "200000000000000001";

let harness: DiscordHarness | undefined;
let tb: TestBot | undefined;
afterEach(async () => {
  await tb?.close();
  await harness?.close();
  tb = harness = undefined;
});

const withButton = (label: string) => (m: SeenMessage) => m.buttons.some((b) => b.label.includes(label));

describe("an MCP server's question in a Discord thread", () => {
  it("is answered by the requester with a click and a thread reply, and the server gets the answers", async () => {
    harness = await createDiscordHarness();
    const h = harness;
    tb = await startTestBot({
      adapters: [h.adapter],
      configure: (config) => {
        config.tools.profile = "full";
        config.approval.timeoutMs = 15_000;
        config.discord.access = { ...config.discord.access, users: ["*"], conversations: ["*"] };
        config.mcp = McpConfigSchema.parse({ servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnlyTools: ["deploy"] } } });
      },
    });
    routeModel(tb.model, [{ when: "deploy the build", first: callTools({ name: "fx__deploy" }), then: { text: "The deploy tool has answered." } }]);
    const posted = await h.userSays("please deploy the build", { userId: ALICE });
    const thread = () => h.botMessages(posted.conversationId, posted.threadId);
    const choice = await eventually(async () => (await thread()).find(withButton("staging")), "the environment question");
    const staging = choice.buttons.find((b) => b.label.includes("staging"))!.payload;
    expect((await h.click(choice, staging, "200000000000000002")).shownToClicker).toMatch(/may answer this; nothing changed/);
    await h.click(choice, staging, ALICE);
    await eventually(async () => (await thread()).find((m) => m.text.includes("Release note")), "the note question");
    await h.userSays("hotfix for the login page", { userId: ALICE, threadId: posted.threadId, mention: false });
    const review = await eventually(async () => (await thread()).find(withButton("Send")), "the review of the answers");
    await h.click(review, review.buttons.find((b) => b.label.includes("Send"))!.payload, ALICE);
    await eventually(async () => (await thread()).find((m) => m.text.includes("The deploy tool has answered.")), "the answer");
    const toolResult = messagesOf(tb.model.requests.at(-1)!).filter((m) => m.role === "tool").map((m) => String(m.content)).join("\n");
    expect(toolResult).toContain("deploying to staging: hotfix for the login page");
  });
});
