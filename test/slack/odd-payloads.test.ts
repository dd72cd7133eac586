import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/observe/logger.ts";
import { useHttpModeAdapter } from "./http-setup.ts";
import { ALICE, GENERAL, createSlackHarness, type SlackHarness } from "./harness.ts";
import { RecordingSink, settle, until } from "./support.ts";
import type { Delivery } from "../emulators/slack/index.ts";

/** JSON log lines the adapter wrote, parsed. */
type LogLine = { level: number; msg: string; [key: string]: unknown };

const WARN = 40;

function expectAckedInTime(d: Delivery): void {
  expect(d.timing.ackedAt, "the envelope was never acknowledged").toBeDefined();
  expect(d.timing.ms!).toBeLessThan(3000);
}

function ackText(d: Delivery): string {
  const payload = d.timing.ackPayload as { text?: string; response_type?: string } | undefined;
  expect(payload?.response_type).toBe("ephemeral");
  return payload?.text ?? "";
}

describe("Slack payloads with missing fields or of kinds the app does not use (Socket Mode)", () => {
  let h: SlackHarness;
  let sink: RecordingSink;
  let lines: LogLine[];

  beforeEach(async () => {
    lines = [];
    const log = createLogger({ level: "debug", destinations: [{ write: (line: string) => void lines.push(JSON.parse(line) as LogLine) }] });
    h = await createSlackHarness({ adapter: { log } });
    sink = new RecordingSink();
    await h.adapter.start(sink);
    await h.emulator.waitForSocket(5000);
  });
  afterEach(async () => {
    await h.close();
  });

  const slashWithout = (field: string) => {
    const body = h.emulator.slashCommandBody(GENERAL, ALICE, "/gatehouse", "status");
    delete body[field];
    return h.emulator.deliverRaw("slash_commands", body);
  };
  const listenerErrors = () => lines.filter((l) => l.msg === "slack listener error" || /unhandled|not acknowledged|cannot read properties/i.test(l.msg));

  it("answers a slash command without text with the usage, shown only to the person", async () => {
    const d = await slashWithout("text");
    expectAckedInTime(d);
    expect(ackText(d)).toBe("Usage: /gatehouse stop | status | new | compact | always | help");
    await settle();
    expect(sink.envelopes).toHaveLength(0);
    expect(listenerErrors()).toEqual([]);
  });

  for (const field of ["user_id", "channel_id"]) {
    it(`answers a slash command without ${field} with a short error and logs a warning`, async () => {
      const d = await slashWithout(field);
      expectAckedInTime(d);
      expect(ackText(d)).toMatch(/^Gatehouse could not read this command/);
      await settle();
      expect(sink.envelopes).toHaveLength(0);
      expect(lines.find((l) => l.level === WARN && (l.fields as string[] | undefined)?.includes(field))).toBeDefined();
      expect(listenerErrors()).toEqual([]);
    });
  }

  it("forwards a slash command that lacks only its trigger id", async () => {
    const d = await slashWithout("trigger_id");
    expectAckedInTime(d);
    const env = await until(() => sink.envelopes[0]);
    expect(env).toMatchObject({ text: "/status", sender: { id: ALICE }, conversation: { id: GENERAL } });
  });

  it("answers a slash command under another name with the usage of its own", async () => {
    const d = await h.emulator.slashCommand(GENERAL, ALICE, "/deploy", "now");
    expectAckedInTime(d);
    expect(ackText(d)).toBe("Usage: /gatehouse stop | status | new | compact | always | help");
    await settle();
    expect(sink.envelopes).toHaveLength(0);
  });

  const common = { api_app_id: "A0APP", token: "emulator-verification-token", team: { id: "T0TEAM", domain: "emulated" }, user: { id: ALICE, username: "alice", team_id: "T0TEAM" }, is_enterprise_install: false };
  const view = { id: "V0VIEW", team_id: "T0TEAM", type: "modal", callback_id: "some_modal", private_metadata: "", state: { values: {} }, hash: "1.abc" };
  const unused: Array<[string, Record<string, unknown>]> = [
    ["a modal submission", { type: "view_submission", ...common, trigger_id: "1.2", view }],
    ["a closed modal", { type: "view_closed", ...common, view, is_cleared: false }],
    ["a global shortcut", { type: "shortcut", ...common, callback_id: "some_shortcut", trigger_id: "1.2", action_ts: "1.2" }],
    ["a message shortcut", {
      type: "message_action", ...common, callback_id: "some_action", trigger_id: "1.2", action_ts: "1.2", response_url: "http://127.0.0.1:9/none",
      channel: { id: GENERAL, name: "general" }, message: { type: "message", user: ALICE, ts: "1.000001", text: "hi" }, message_ts: "1.000001",
    }],
    ["a select menu asking for options", { type: "block_suggestion", ...common, action_id: "pick", block_id: "b", value: "de", container: { type: "message" }, channel: { id: GENERAL } }],
  ];
  for (const [what, payload] of unused) {
    it(`acknowledges and ignores ${what}`, async () => {
      const from = lines.length;
      const d = await h.emulator.deliverRaw("interactive", payload);
      expectAckedInTime(d);
      await settle();
      expect(sink.envelopes).toHaveLength(0);
      expect(sink.clicks).toHaveLength(0);
      expect(listenerErrors()).toEqual([]);
      expect(lines.slice(from).filter((l) => l.level >= WARN)).toEqual([]);
    });
  }

  const legacy: Array<[string, Record<string, unknown>]> = [
    ["a legacy attachment button click", {
      type: "interactive_message", ...common, callback_id: "old_buttons", actions: [{ name: "approve", type: "button", value: "yes" }],
      channel: { id: GENERAL, name: "general" }, action_ts: "1.2", message_ts: "1.000001", attachment_id: "1", response_url: "http://127.0.0.1:9/none", trigger_id: "1.2",
    }],
    ["a legacy dialog submission", { type: "dialog_submission", ...common, callback_id: "old_dialog", submission: { name: "x" }, channel: { id: GENERAL, name: "general" }, action_ts: "1.2", state: "", response_url: "http://127.0.0.1:9/none" }],
    ["a cancelled legacy dialog", { type: "dialog_cancellation", ...common, callback_id: "old_dialog", channel: { id: GENERAL, name: "general" }, action_ts: "1.2", state: "", response_url: "http://127.0.0.1:9/none" }],
  ];
  for (const [what, payload] of legacy) {
    it(`acknowledges and ignores ${what}`, async () => {
      const from = lines.length;
      const d = await h.emulator.deliverRaw("interactive", payload);
      expectAckedInTime(d);
      await settle();
      expect(sink.envelopes).toHaveLength(0);
      expect(sink.clicks).toHaveLength(0);
      expect(listenerErrors()).toEqual([]);
      expect(lines.slice(from).filter((l) => l.level >= WARN)).toEqual([]);
    });
  }

  it("acknowledges a function_executed event of a workflow step it does not provide", async () => {
    const from = lines.length;
    const d = await h.emulator.deliverRaw("events_api", {
      token: "emulator-verification-token", team_id: "T0TEAM", api_app_id: "A0APP", type: "event_callback", event_id: "Ev0FUNC00001", event_time: 1_760_000_000,
      event: {
        type: "function_executed", function: { id: "Fn0001", callback_id: "some_step", title: "Some step", type: "app", input_parameters: [], output_parameters: [], app_id: "A0APP", date_created: 1, date_updated: 1, date_deleted: 0 },
        inputs: {}, function_execution_id: "Fx0001", workflow_execution_id: "Wx0001", event_ts: "1.2", bot_access_token: "xwfp-emulated",
      },
    });
    expectAckedInTime(d);
    await settle();
    expect(sink.envelopes).toHaveLength(0);
    expect(listenerErrors()).toEqual([]);
    expect(lines.slice(from).filter((l) => l.level >= WARN)).toEqual([]);
  });

  it("keeps answering slash commands after malformed ones", async () => {
    await slashWithout("user_id");
    await slashWithout("text");
    const d = await h.emulator.slashCommand(GENERAL, ALICE, "/gatehouse", "stop");
    expectAckedInTime(d);
    const env = await until(() => sink.envelopes[0]);
    expect(env.text).toBe("/stop");
  });
});

describe("Slack payloads with missing fields or of kinds the app does not use (HTTP mode)", () => {
  const http = useHttpModeAdapter();

  it("answers a slash command without a user with the short error in the response", async () => {
    const body = http.emu.slashCommandBody(GENERAL, ALICE, "/gatehouse", "stop");
    delete body.user_id;
    const d = await http.emu.deliverRaw("slash_commands", body);
    expect(d.status).toBe(200);
    expect(d.timing.ms!).toBeLessThan(3000);
    expect(JSON.parse(String(d.timing.ackPayload))).toMatchObject({ response_type: "ephemeral", text: expect.stringMatching(/^Gatehouse could not read this command/) });
    await settle();
    expect(http.sink.envelopes).toHaveLength(0);
  });

  it("answers a modal submission with 200 at once", async () => {
    const d = await http.emu.deliverRaw("interactive", { type: "view_submission", api_app_id: "A0APP", team: { id: "T0TEAM" }, user: { id: ALICE }, view: { id: "V1", callback_id: "x", state: { values: {} } } });
    expect(d.status).toBe(200);
    expect(d.timing.ms!).toBeLessThan(3000);
  });
});
