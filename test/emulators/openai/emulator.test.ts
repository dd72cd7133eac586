import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIEmulator, type OpenAIEmulator } from "./index.ts";

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
});
