/**
 * A Slack adapter in HTTP Events API mode against the emulator, started before each test and
 * stopped after: the emulator delivers signed requests to the adapter's endpoint.
 */
import { afterEach, beforeEach } from "vitest";
import { createSlackAdapter, type SlackChannelAdapter } from "../../adapters/slack/adapter.ts";
import { startSlackEmulator, type SlackEmulator } from "../emulators/slack/index.ts";
import { RecordingSink } from "./support.ts";

export const SIGNING_SECRET = "emulator-signing-secret";

export interface HttpModeSetup {
  readonly emu: SlackEmulator;
  readonly adapter: SlackChannelAdapter;
  readonly sink: RecordingSink;
}

export function useHttpModeAdapter(): HttpModeSetup {
  let emu: SlackEmulator | undefined;
  let adapter: SlackChannelAdapter | undefined;
  let sink: RecordingSink | undefined;
  beforeEach(async () => {
    emu = await startSlackEmulator();
    adapter = createSlackAdapter({ botToken: emu.botToken, signingSecret: SIGNING_SECRET, apiUrl: emu.apiUrl, http: { port: 0, host: "127.0.0.1" } });
    sink = new RecordingSink();
    await adapter.start(sink);
    emu.useHttp({ url: adapter.eventsUrl!, signingSecret: SIGNING_SECRET });
  });
  afterEach(async () => {
    await adapter?.stop();
    await emu?.close();
  });
  return {
    get emu() {
      return emu!;
    },
    get adapter() {
      return adapter!;
    },
    get sink() {
      return sink!;
    },
  };
}
