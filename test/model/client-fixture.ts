/**
 * What the model-client tests share: the OpenAI-compatible emulator started before each test and
 * closed after, a client pointed at it, and two tools to offer.
 */
import { afterEach, beforeEach } from "vitest";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { createModelClient, type ModelClientOptions } from "../../src/model/openai-client.ts";
import type { ModelClient, ToolSpec } from "../../src/model/types.ts";
import { silentLogger } from "../../src/observe/logger.ts";

export const TOOLS: ToolSpec[] = [
  { name: "current_time", description: "The current time.", parameters: { type: "object", properties: {} } },
  { name: "shell", description: "Runs a shell command.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
];

export interface ClientFixture {
  readonly emulator: OpenAIEmulator;
  client(overrides?: Partial<ModelClientOptions>): ModelClient;
}

/** Registers the emulator's start and stop around each test; `defaults` apply to every client. */
export function useModelEmulator(defaults: Partial<ModelClientOptions> = {}): ClientFixture {
  let emulator: OpenAIEmulator | undefined;
  beforeEach(async () => {
    emulator = await startOpenAIEmulator();
  });
  afterEach(async () => {
    await emulator?.close();
  });
  return {
    get emulator() {
      return emulator!;
    },
    client: (overrides = {}) =>
      createModelClient({
        baseURL: emulator!.baseURL, model: "test-model", toolProtocol: "native", timeoutMs: 2_000, maxRetries: 0,
        log: silentLogger(), ...defaults, ...overrides,
      }),
  };
}
