/**
 * Whole turns against recorded-shape streams of real servers: each tool runs exactly once with the
 * model's exact arguments, the answer carries no artefacts, and the next message of the session works.
 */
import { afterEach, describe, expect, it } from "vitest";
import { engineFixture, probeTool, type EngineFixture } from "../engine/fixture.ts";
import {
  deepseekThinking,
  geminiAnswer,
  geminiParallelCalls,
  ollamaThinkInContent,
  signatureOf,
  vllmCutShort,
  vllmOrphanThinkClose,
} from "../emulators/openai/recorded.ts";
import type { ChatMessage } from "../../src/model/types.ts";
import type { TurnEvent } from "../../src/engine/types.ts";

let fx: EngineFixture;
afterEach(async () => fx?.close());

const PARIS = { name: "weather", arguments: '{"value":"Paris"}' };
const LONDON = { name: "weather", arguments: '{"value":"London"}' };

async function withWeather(options: { maxRetries?: number } = {}) {
  const weather = probeTool("weather", { output: (args) => `${String(args.value)}: 18 °C` });
  fx = await engineFixture({ tools: [weather.tool], policy: { profile: "full" }, ...options });
  return weather;
}

type WireMessage = { role: string; content: string | null; reasoning_content?: string; tool_calls?: Array<Record<string, unknown>> };
const sent = (i: number) => fx.emu.requests[i]!.body.messages as WireMessage[];
const finals = (events: TurnEvent[]) => events.flatMap((e) => (e.type === "final" ? [e.text] : []));

describe("turns against recorded streams", () => {
  it("runs each call of a Gemini batch without index once, with its exact arguments", async () => {
    const weather = await withWeather();
    fx.emu.script(geminiParallelCalls([PARIS, LONDON]), geminiAnswer("Paris and London are both at 18 °C."));
    const { outcome } = await fx.turn("weather in Paris and London?");
    expect(weather.calls).toEqual([{ value: "Paris" }, { value: "London" }]);
    expect(outcome).toMatchObject({ status: "done", text: "Paris and London are both at 18 °C." });
    fx.emu.script(geminiAnswer("You are welcome."));
    expect((await fx.turn("thanks")).outcome).toMatchObject({ status: "done", text: "You are welcome." });
  });

  it("sends Gemini's thought signature back with its call, so the next request is accepted", async () => {
    const weather = await withWeather();
    fx.emu.setProviderRules({ thoughtSignatures: true });
    fx.emu.script(geminiParallelCalls([PARIS, LONDON], { signatures: true }), geminiAnswer("Both 18 °C."));
    const { outcome } = await fx.turn("weather in Paris and London?");
    expect(outcome).toMatchObject({ status: "done", text: "Both 18 °C." });
    expect(weather.calls).toHaveLength(2);
    expect(fx.emu.requests).toHaveLength(2);
    const calls = sent(1).find((m) => m.tool_calls)!.tool_calls!;
    expect(calls[0]).toMatchObject({ extra_content: { google: { thought_signature: signatureOf(PARIS) } } });
    expect(JSON.stringify(outcome.text)).not.toContain(signatureOf(PARIS));

    fx.emu.script(geminiParallelCalls([LONDON], { signatures: true }), geminiAnswer("Still 18 °C."));
    expect((await fx.turn("and London again?")).outcome).toMatchObject({ status: "done", text: "Still 18 °C." });
  });

  it("sends DeepSeek's reasoning back on the tool-call message, shows it to no one, and the session goes on", async () => {
    const weather = await withWeather();
    fx.emu.setProviderRules({ reasoningContent: true });
    const reasoning = "The user asks about Paris; call the weather tool.";
    fx.emu.script(deepseekThinking(reasoning, { call: PARIS }), deepseekThinking("Report it.", { text: "Paris: 18 °C." }));
    const { outcome, turnEvents } = await fx.turn("weather in Paris?");
    expect(outcome).toMatchObject({ status: "done", text: "Paris: 18 °C." });
    expect(weather.calls).toEqual([{ value: "Paris" }]);
    expect(fx.emu.requests).toHaveLength(2);
    expect(sent(1).find((m) => m.tool_calls)?.reasoning_content).toBe(reasoning);
    expect(JSON.stringify(turnEvents)).not.toContain("weather tool");

    fx.emu.script(deepseekThinking("Answer briefly.", { text: "Bye!" }));
    expect((await fx.turn("bye")).outcome).toMatchObject({ status: "done", text: "Bye!" });
    // The stored tool-call message still carries the reasoning for every later request.
    expect(sent(2).find((m) => m.tool_calls)?.reasoning_content).toBe(reasoning);
  });

  it("recovers a session whose stored tool turn lacks the reasoning DeepSeek insists on", async () => {
    await withWeather();
    fx.emu.setProviderRules({ reasoningContent: true });
    const old: ChatMessage[] = [
      { role: "user", content: "weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "old1", type: "function", function: { name: "weather", arguments: '{"value":"Paris"}' } }] },
      { role: "tool", tool_call_id: "old1", content: "Paris: 18 °C" },
      { role: "assistant", content: "18 °C in Paris." },
    ];
    await fx.store.appendHistory("console:c1", old);
    fx.emu.script(deepseekThinking("Recall the earlier answer.", { text: "It was 18 °C." }));
    expect((await fx.turn("what did you say?")).outcome).toMatchObject({ status: "done", text: "It was 18 °C." });
  });

  it("keeps <think> reasoning out of the answer, the text delivered and the history sent back", async () => {
    await withWeather();
    fx.emu.script(ollamaThinkInContent("The user says hi. Keep it short.", "Hi there!"));
    const { outcome, turnEvents } = await fx.turn("hi");
    expect(outcome.text).toBe("Hi there!");
    expect(finals(turnEvents)).toEqual(["Hi there!"]);
    fx.emu.script(vllmOrphanThinkClose("They thank me. Reply kindly.", "Any time."));
    const second = await fx.turn("thanks");
    expect(second.outcome.text).toBe("Any time.");
    expect(JSON.stringify(sent(1))).not.toContain("Keep it short");
    fx.emu.script({ text: "ok" });
    await fx.turn("one more");
    expect(JSON.stringify(sent(2))).not.toMatch(/think|Reply kindly/);
  });

  it("asks again after a stream cut inside a tool call, and runs the call once, whole", async () => {
    const weather = await withWeather({ maxRetries: 1 });
    fx.emu.script(vllmCutShort({ call: PARIS }), geminiParallelCalls([PARIS]), geminiAnswer("18 °C."));
    const { outcome } = await fx.turn("weather in Paris?");
    expect(outcome).toMatchObject({ status: "done", text: "18 °C." });
    expect(weather.calls).toEqual([{ value: "Paris" }]);
  });

  it("asks again after a stream cut once text had come (nothing of it is shown before the reply is whole), and runs the call once", async () => {
    const weather = await withWeather({ maxRetries: 2 });
    fx.emu.script(vllmCutShort({ text: "Let me check.", call: PARIS }), geminiParallelCalls([PARIS]), geminiAnswer("18 °C in Paris."));
    const { outcome } = await fx.turn("weather in Paris?");
    expect(outcome).toMatchObject({ status: "done", text: "18 °C in Paris." });
    expect(weather.calls).toEqual([{ value: "Paris" }]);
    expect(fx.emu.requests).toHaveLength(3);
  });

  it("says the model connection dropped when asking again did not help, runs no half-received call, and the next message works", async () => {
    const weather = await withWeather({ maxRetries: 1 });
    fx.emu.script(vllmCutShort({ text: "Let me check.", call: PARIS }), vllmCutShort({ text: "Let me check.", call: PARIS }));
    const { outcome } = await fx.turn("weather in Paris?");
    expect(outcome.status).toBe("failed");
    expect(outcome.text).toMatch(/the model connection dropped/);
    expect(outcome.text).not.toMatch(/internal error|shown so far/);
    expect(weather.calls).toEqual([]);
    expect(fx.emu.requests).toHaveLength(2);
    fx.emu.script(geminiAnswer("Sorry, ask me again."));
    expect((await fx.turn("hello?")).outcome).toMatchObject({ status: "done", text: "Sorry, ask me again." });
  });
});
