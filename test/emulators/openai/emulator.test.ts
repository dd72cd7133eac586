import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIEmulator, type OpenAIEmulator } from "./index.ts";
import { tcpWrites } from "./recorded.ts";

let emulator: OpenAIEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
});

async function chat(body: object, headers: Record<string, string> = {}) {
  const res = await fetch(`${emulator!.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as { error?: { message: string; code: string | null } } };
}

describe("OpenAI emulator", () => {
  it("lists its model and refuses a wrong key with the API's error shape", async () => {
    emulator = await startOpenAIEmulator({ apiKey: "right-key", model: "tiny" });
    const models = await fetch(`${emulator.baseURL}/models`, { headers: { authorization: "Bearer right-key" } });
    expect(((await models.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(["tiny"]);
    const refused = await chat({ model: "tiny", messages: [{ role: "user", content: "hi" }] }, { authorization: "Bearer wrong" });
    expect(refused.status).toBe(401);
    expect(refused.json.error?.code).toBe("invalid_api_key");
  });

  it("rejects a tool result that answers no call, as the real API does, without using up a scripted step", async () => {
    emulator = await startOpenAIEmulator();
    emulator.script({ text: "scripted" });
    const bad = await chat({ model: "m", messages: [{ role: "user", content: "hi" }, { role: "tool", tool_call_id: "nope", content: "x" }] });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toContain("must be a response to a preceeding message with 'tool_calls'");
    const good = await chat({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(good.json).toMatchObject({ choices: [{ message: { content: "scripted" } }] });
  });

  it("rejects an assistant tool call left without a result", async () => {
    emulator = await startOpenAIEmulator();
    const bad = await chat({
      model: "m",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }] },
        { role: "user", content: "again" },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toContain("did not have response messages: c1");
  });

  it("sends a recorded stream in its separate TCP writes, and cuts the connection when told", async () => {
    emulator = await startOpenAIEmulator();
    const text = 'data: {"choices":[{"index":0,"delta":{"content":"Grüße"},"finish_reason":null}]}\n\n';
    emulator.script({ sse: tcpWrites(text, 16) }, { sse: tcpWrites(text, 16), cut: true });
    const read = async () => {
      const res = await fetch(`${emulator!.baseURL}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }) });
      const reader = res.body!.getReader();
      const parts: Uint8Array[] = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return parts;
        parts.push(value);
      }
    };
    const parts = await read();
    expect(parts.length).toBeGreaterThan(3);
    expect(Buffer.concat(parts).toString("utf8")).toBe(text);
    await expect(read()).rejects.toThrow(/terminated/);
  });

  it("streams a scripted reply as chunk events in the API's order, the tool call's arguments spread over several, then [DONE]", async () => {
    emulator = await startOpenAIEmulator();
    emulator.script({ text: "Looking it up", toolCalls: [{ name: "current_time", arguments: JSON.stringify({ timezone: "Europe/Berlin" }) }] });
    const res = await fetch(`${emulator.baseURL}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }) });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = (await res.text()).split("\n\n").filter(Boolean).map((e) => e.replace(/^data: /, ""));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { object: string; choices: Array<{ delta: Record<string, any>; finish_reason: string | null }> });
    expect(new Set(chunks.map((c) => c.object))).toEqual(new Set(["chat.completion.chunk"]));
    const deltas = chunks.map((c) => c.choices[0]!.delta);
    expect(deltas[0]).toMatchObject({ role: "assistant", content: "" });
    expect(deltas.map((d) => d.content ?? "").join("")).toBe("Looking it up");
    const calls = deltas.filter((d) => d.tool_calls).map((d) => d.tool_calls[0]);
    expect(calls[0]).toMatchObject({ index: 0, type: "function", function: { name: "current_time", arguments: "" } });
    expect(calls.length).toBeGreaterThan(2);
    expect(JSON.parse(calls.map((c) => c.function.arguments).join(""))).toEqual({ timezone: "Europe/Berlin" });
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("enforces a provider's own rules only when told to", async () => {
    emulator = await startOpenAIEmulator();
    const body = {
      model: "m",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "x" },
      ],
    };
    emulator.script({ text: "fine" });
    expect((await chat(body)).status).toBe(200);
    emulator.setProviderRules({ reasoningContent: true });
    expect((await chat(body)).json.error?.message).toMatch(/^Missing `reasoning_content` field in the assistant message at message index 1/);
    emulator.setProviderRules({ thoughtSignatures: true });
    expect((await chat(body)).json.error?.message).toMatch(/^Function call is missing a thought_signature/);
  });
});
