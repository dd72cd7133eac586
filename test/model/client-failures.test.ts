import { freePort } from "../support/free-port.ts";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { TOOLS, useModelEmulator } from "./client-fixture.ts";
import { startOpenAIEmulator } from "../emulators/openai/index.ts";
import { ModelError, type ChatMessage } from "../../src/model/types.ts";
import { createLogger, silentLogger } from "../../src/observe/logger.ts";

const ASK: ChatMessage[] = [{ role: "user", content: "hello" }];
const KEY = "sk-live-0123456789abcdefghij";

const fixture = useModelEmulator({ toolProtocol: "native" });
const client = fixture.client;

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe("model client failures", () => {
  it("waits out a 429 with retry-after and then succeeds", async () => {
    fixture.emulator.script({ status: 429, retryAfter: 1 }, { text: "made it" });
    const started = Date.now();
    const reply = await client({ maxRetries: 2 }).complete({ messages: ASK });
    expect(reply.text).toBe("made it");
    expect(fixture.emulator.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("retries a 500 and, when it keeps failing, says the endpoint failed", async () => {
    fixture.emulator.script({ status: 500 }, { status: 500 });
    const error = await failure(client({ maxRetries: 1 }).complete({ messages: ASK }));
    expect(fixture.emulator.requests).toHaveLength(2);
    expect(error.kind).toBe("server");
    expect(error.message).toMatch(/^the model endpoint failed with 500 \(1 retry\)/);
  });

  it("names the page a proxy answered with (its title), not its HTML, when the endpoint fails behind one", async () => {
    const nginx = "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n";
    const cloudflare = `<!DOCTYPE html><html lang="en-US"><head><style>body{margin:0}</style><script>window._cf=1</script></head><body><div class="cf-error"><h1><span>Bad gateway</span> <span>Error code 502</span></h1>${"<p>Visit cloudflare.com for more information.</p>".repeat(20)}</div></body></html>`;
    fixture.emulator.script({ status: 503, html: nginx });
    const first = await failure(client({ maxRetries: 0 }).complete({ messages: ASK }));
    expect(first.message).toBe("the model endpoint failed with 503 (not retried): 503 Service Temporarily Unavailable (an HTML page from something in front of the model server, such as a proxy)");
    fixture.emulator.script({ status: 502, html: cloudflare });
    const second = await failure(client({ maxRetries: 0 }).complete({ messages: ASK }));
    expect(second.message).toMatch(/: Bad gateway Error code 502 \(an HTML page from something in front of the model server, such as a proxy\)$/);
    expect(`${first.message}${second.message}`).not.toMatch(/[<>]|_cf|margin/);
  });

  it("reports a rate limit that outlasts the retries", async () => {
    fixture.emulator.script({ status: 429 });
    const error = await failure(client().complete({ messages: ASK }));
    expect(error.kind).toBe("rate_limited");
  });

  it("says a used-up quota (429 insufficient_quota) is a billing matter, without retrying it", async () => {
    fixture.emulator.script({ status: 429, code: "insufficient_quota" }, { text: "never asked" });
    const error = await failure(client({ maxRetries: 2 }).complete({ messages: ASK }));
    expect(fixture.emulator.requests).toHaveLength(1);
    expect(error.message).toMatch(/quota is used up \(429 insufficient_quota\): You exceeded your current quota/);
    expect(error.message).toContain("billing");
  });

  for (const stream of [true, false]) {
    it(`gives up on an endpoint that never answers (${stream ? "streamed" : "whole"})`, async () => {
      fixture.emulator.script({ hang: true });
      const started = Date.now();
      const error = await failure(client({ timeoutMs: 300, stream }).complete({ messages: ASK }));
      expect(error.kind).toBe("timeout");
      expect(error.message).toBe("the model endpoint did not answer within 0.3 s");
      expect(Date.now() - started).toBeLessThan(2_000);
    });
  }

  it("gives up on a stream that goes silent halfway, keeping what was shown", async () => {
    fixture.emulator.script({ hang: true, afterText: "Half an answ" });
    const deltas: string[] = [];
    const error = await failure(client({ timeoutMs: 300 }).complete({ messages: ASK, onTextDelta: (t) => deltas.push(t) }));
    expect(error.kind).toBe("timeout");
    expect(deltas.join("")).toBe("Half an answ");
  });

  it("stops when the turn is cancelled", async () => {
    fixture.emulator.script({ hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await failure(client({ timeoutMs: 5_000 }).complete({ messages: ASK, signal: controller.signal }));
    expect(error.kind).toBe("aborted");
    // At once, not at the timeout; and the request itself is dropped, so the server stops working on it.
    expect(Date.now() - started).toBeLessThan(2_500);
    await expect.poll(() => fixture.emulator.requests.at(-1)?.hungUp, { timeout: 2_000 }).toBe(true);
    expect(fixture.emulator.requests).toHaveLength(1);
  });

  it("stops a stream that is already flowing when the turn is cancelled", async () => {
    fixture.emulator.script({ hang: true, afterText: "thinking about it" });
    const controller = new AbortController();
    const started = Date.now();
    const error = await failure(
      client({ timeoutMs: 5_000 }).complete({ messages: ASK, signal: controller.signal, onTextDelta: () => controller.abort() }),
    );
    expect(error.kind).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(2_500);
    await expect.poll(() => fixture.emulator.requests.at(-1)?.hungUp, { timeout: 2_000 }).toBe(true);
    expect(fixture.emulator.requests).toHaveLength(1);
  });

  it("says where it tried and what to set when nothing listens there", async () => {
    const port = await freePort();
    const baseURL = `http://127.0.0.1:${port}/v1`;
    const error = await failure(client({ baseURL }).complete({ messages: ASK }));
    expect(error.kind).toBe("unreachable");
    expect(error.message).toContain(`cannot reach the model endpoint at ${baseURL}`);
    expect(error.message).toContain("OPENAI_BASE_URL");
  });

  it("asks to check OPENAI_API_KEY on a 401, without ever showing the key", async () => {
    const guarded = await startOpenAIEmulator({ apiKey: "the-right-key" });
    const lines: string[] = [];
    const log = createLogger({ level: "debug", destinations: [sink(lines)] });
    const error = await failure(client({ baseURL: guarded.baseURL, apiKey: KEY, log }).complete({ messages: ASK }));
    await guarded.close();
    expect(error.kind).toBe("auth");
    expect(error.message).toContain("check OPENAI_API_KEY");
    expect(error.message).not.toContain(KEY);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).not.toContain(KEY);
  });

  for (const stream of [true, false]) {
    it(`rejects a 200 that is not a completion (${stream ? "streamed" : "whole"})`, async () => {
      fixture.emulator.script({ garbage: true });
      const error = await failure(client({ stream }).complete({ messages: ASK }));
      expect(error.kind).toBe("bad_response");
      expect(error.message).toContain("not a chat completion");
    });
  }

  it("rejects JSON that is not shaped like a completion", async () => {
    fixture.emulator.script({ garbage: true, contentType: "application/json", body: '{"result":"ok"}' });
    const error = await failure(client({ stream: false }).complete({ messages: ASK }));
    expect(error.kind).toBe("bad_response");
  });

  it("does not switch protocols in auto mode for a 400 that is not about supporting tools", async () => {
    fixture.emulator.script({ status: 400, message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'." });
    const error = await failure(client({ toolProtocol: "auto" }).complete({ messages: ASK, tools: [{ name: "t", description: "", parameters: {} }] }));
    expect(error.kind).toBe("server");
    expect(fixture.emulator.requests).toHaveLength(1);
  });

  it("does not fall back to text outside auto mode", async () => {
    fixture.emulator.script({ status: 400, message: "tools are not supported by this model" });
    const error = await failure(client().complete({ messages: ASK, tools: [{ name: "t", description: "", parameters: {} }] }));
    expect(error.kind).toBe("server");
    expect(error.message).toContain("rejected the request (400): tools are not supported by this model");
    expect(fixture.emulator.requests).toHaveLength(1);
  });
});

function sink(lines: string[]) {
  return new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
}
