import { afterEach, describe, expect, it } from "vitest";
import { createSlackAdapter } from "../../adapters/slack/adapter.ts";
import { startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";
import { RecordingSink } from "./support.ts";

describe("Slack adapter startup", () => {
  let emu: SlackEmulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  it("names SLACK_BOT_TOKEN when Slack refuses the bot token, without leaking it", async () => {
    emu = await startSlackEmulator();
    const adapter = createSlackAdapter({ botToken: "xoxb-wrong-token-123", appToken: emu.appToken, apiUrl: emu.apiUrl });
    const err = (await adapter.start(new RecordingSink()).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/SLACK_BOT_TOKEN \(invalid_auth\)/);
    expect(err.message).not.toContain("xoxb-wrong-token-123");
    expect(emu.world.calls.map((c) => c.method)).toEqual(["auth.test"]);
  });

  it("names SLACK_APP_TOKEN when Socket Mode is refused", async () => {
    emu = await startSlackEmulator();
    const adapter = createSlackAdapter({ botToken: emu.botToken, appToken: "xapp-1-wrong-app-token", apiUrl: emu.apiUrl });
    const err = (await adapter.start(new RecordingSink()).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/SLACK_APP_TOKEN \(invalid_auth\)/);
    await adapter.stop();
  });

  it("says which variables are missing when neither Socket Mode nor HTTP mode is configured", async () => {
    const adapter = createSlackAdapter({ botToken: "xoxb-anything-12345" });
    await expect(adapter.start(new RecordingSink())).rejects.toThrow(/SLACK_APP_TOKEN .* or SLACK_SIGNING_SECRET/);
  });

  it("says Slack could not be reached, naming SLACK_API_URL", async () => {
    const adapter = createSlackAdapter({ botToken: "xoxb-anything-12345", appToken: "xapp-1-anything", apiUrl: "http://127.0.0.1:9/api/" });
    await expect(adapter.start(new RecordingSink())).rejects.toThrow(/Could not reach Slack .* SLACK_API_URL/);
  });
});
