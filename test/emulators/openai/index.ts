/** The OpenAI-compatible test emulator: start it with `startOpenAIEmulator()`. */
export { startOpenAIEmulator } from "./emulator.ts";
export type { OpenAIEmulator, OpenAIEmulatorOptions, RecordedRequest, Step, ScriptedToolCall, ScriptedTextToolCall, ChatRequestBody } from "./emulator.ts";
