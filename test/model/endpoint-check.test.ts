import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIEmulator, type OpenAIEmulator } from "../emulators/openai/index.ts";
import { checkModelEndpoint } from "../../src/model/endpoint-check.ts";

let emu: OpenAIEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("the model endpoint check at start", () => {
  it("passes with the right key and fails fatally with a wrong one, without showing the key", async () => {
    emu = await startOpenAIEmulator({ apiKey: "sk-right-key-0123456789" });
    expect(await checkModelEndpoint(emu.baseURL, "sk-right-key-0123456789")).toEqual({ ok: true });
    const wrong = await checkModelEndpoint(emu.baseURL, "sk-wrong-key-0123456789");
    expect(wrong).toMatchObject({ ok: false, fatal: true, message: expect.stringMatching(/refused the API key \(HTTP 401\).*OPENAI_API_KEY/) });
    expect(JSON.stringify(wrong)).not.toContain("sk-wrong-key");
  });

  it("only reports an endpoint that cannot be reached", async () => {
    const result = await checkModelEndpoint("http://127.0.0.1:9/v1", undefined, 500);
    expect(result).toMatchObject({ ok: false, fatal: false });
  });
});
