/** Starts a Discord harness with a recording sink for one test; `close` tears both down. */
import type { DiscordAdapterOptions } from "../../adapters/discord/index.ts";
import type { DiscordEmulatorOptions } from "../emulators/discord/index.ts";
import { createDiscordHarness, type DiscordHarness } from "./harness.ts";
import { RecordingSink } from "./recording-sink.ts";

export interface Started {
  h: DiscordHarness;
  sink: RecordingSink;
}

/** A started adapter against a fresh emulator. */
export async function startHarness(adapter: Partial<DiscordAdapterOptions> = {}, emulator: DiscordEmulatorOptions = {}): Promise<Started> {
  const h = await createDiscordHarness(adapter, emulator);
  const sink = new RecordingSink();
  try {
    await h.adapter.start(sink);
  } catch (err) {
    await h.close();
    throw err;
  }
  return { h, sink };
}
