import { afterEach, describe, expect, it } from "vitest";
import { createDiscordHarness, type DiscordHarness } from "./harness.ts";
import { RecordingSink } from "./recording-sink.ts";
import { startHarness, type Started } from "./setup.ts";

let harness: DiscordHarness | undefined;
let started: Started | undefined;
afterEach(async () => {
  await harness?.close();
  await started?.h.close();
  harness = undefined;
  started = undefined;
});

describe("Discord adapter startup", () => {
  it("says to fix DISCORD_TOKEN when Discord rejects the token", async () => {
    harness = await createDiscordHarness({ token: "not-the-right-token" });
    const err = (await harness.adapter.start(new RecordingSink()).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/DISCORD_TOKEN/);
    expect(err.message).toMatch(/401/);
    expect(err.message).not.toContain("not-the-right-token");
    expect(harness.emulator.calls.map((c) => [c.route, c.status])).toEqual([["getGatewayBot", 401]]);
  });

  it("says to enable the Message Content intent when the gateway closes with 4014", async () => {
    harness = await createDiscordHarness({}, { messageContentIntent: false });
    const err = (await harness.adapter.start(new RecordingSink()).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/Message Content Intent/);
    expect(err.message).toMatch(/4014/);
    expect(harness.emulator.gateway.closeCodes).toEqual([4014]);
  });

  it("refuses an empty token before connecting", async () => {
    harness = await createDiscordHarness({ token: "  " });
    await expect(harness.adapter.start(new RecordingSink())).rejects.toThrow(/DISCORD_TOKEN is empty/);
    expect(harness.emulator.calls).toEqual([]);
  });

  it("registers its commands and turns a slash command into a message with that text", async () => {
    started = await startHarness({ registerSlashCommands: true });
    const { h, sink } = started;
    const registered = h.emulator.state.commands.get("global") as Array<{ name: string }>;
    expect(registered.map((c) => c.name)).toEqual(["stop", "status", "new", "compact", "always", "help"]);

    const posted = await h.userSays("long job", { userId: "300000000000000001" });
    const [first] = await sink.waitForEnvelopes(1);
    await h.adapter.port.send(first!.replyTo, { text: "working" });
    const interaction = await h.emulator.slashCommand({ channelId: posted.threadId!, userId: "300000000000000001", name: "stop" });
    const [, stop] = await sink.waitForEnvelopes(2);
    expect(stop).toMatchObject({ id: interaction.id, text: "/stop", mentioned: true, replyTo: { conversationId: posted.threadId } });
    expect(stop!.conversation).toEqual(first!.conversation);
    await h.emulator.interactionSettled(interaction);
    expect(interaction.responses).toMatchObject([{ kind: "callback", type: 4, ephemeral: true }]);
  });
});
